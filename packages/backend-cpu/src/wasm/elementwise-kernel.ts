import { load, type Operand, op, simd, simdLoad } from './expr';
import { i32, kernel } from './kernel-spec';
import { type Op, type SimdOp, ValType } from './opcodes';

/** The f32 binary ops with a WebAssembly kernel. */
export const ELEMENTWISE_OPS = ['add', 'sub', 'mul', 'div'] as const;
export type ElementwiseOp = (typeof ELEMENTWISE_OPS)[number];

const I = ValType.i32;

/** The exported name of an elementwise kernel. */
export type ElementwiseKernelName = `binary_${ElementwiseOp}_f32`;

/** The exported name of the kernel of `op`. */
export function elementwiseKernel<const N extends ElementwiseOp>(op: N): `binary_${N}_f32` {
  return `binary_${op}_f32`;
}

/**
 * The kernel of `name`: out[r·n + i] = a[r·aRow + i·aStep] ⊕ b[r·bRow + i·bStep] for r < rows
 * and i < n, each row four lanes at a time then a scalar tail. An input with step 0 is splatted
 * once per row before its loop; the three step patterns get their own loop so none branches per
 * element. Parameters: byte addresses of a, b and out, the steps 0 or 1, the row strides, n and
 * rows, all but the addresses in elements.
 */
function elementwise<const N extends ElementwiseOp>(name: N) {
  const scalarOp: Op = `f32.${name}`;
  const vectorOp: SimdOp = `f32x4.${name}`;
  return kernel({
    name: elementwiseKernel(name),
    params: i32('a', 'aStep', 'aRow', 'b', 'bStep', 'bRow', 'out', 'n', 'rows'),
    emit(f, { a, aStep, aRow, b, bStep, bRow, out, n, rows }) {
      const [row, aStart, bStart, end, vecEnd, aBytes, bBytes] = f.locals(I, 7);
      const [av, bv] = f.locals(ValType.v128, 2);
      f.set(aBytes, op('i32.shl', aStep, 2));
      f.set(bBytes, op('i32.shl', bStep, 2));
      f.set(aRow, op('i32.shl', aRow, 2));
      f.set(bRow, op('i32.shl', bRow, 2));
      f.set(aStart, a);
      f.set(bStart, b);
      f.for(row, 0, rows, 1, () => {
        f.set(a, aStart);
        f.set(b, bStart);
        f.set(end, op('i32.add', out, op('i32.shl', n, 2)));
        f.set(vecEnd, op('i32.add', out, op('i32.shl', op('i32.and', n, -4), 2)));
        const vectorLoop = (x: Operand, y: Operand, advanceA: boolean, advanceB: boolean) =>
          f.block((done) => {
            f.brIf(done, op('i32.ge_u', out, vecEnd));
            f.loop((again) => {
              f.storeV128(out, simd(vectorOp, x, y));
              if (advanceA) f.set(a, op('i32.add', a, 16));
              if (advanceB) f.set(b, op('i32.add', b, 16));
              f.set(out, op('i32.add', out, 16));
              f.brIf(again, op('i32.lt_u', out, vecEnd));
            });
          });
        f.if(
          aStep,
          () =>
            f.if(
              bStep,
              () => vectorLoop(simdLoad('v128.load', a), simdLoad('v128.load', b), true, true),
              () => {
                f.set(bv, simdLoad('v128.load32_splat', b));
                vectorLoop(simdLoad('v128.load', a), bv, true, false);
              },
            ),
          () => {
            f.set(av, simdLoad('v128.load32_splat', a));
            f.if(
              bStep,
              () => vectorLoop(av, simdLoad('v128.load', b), false, true),
              () => {
                f.set(bv, simdLoad('v128.load32_splat', b));
                vectorLoop(av, bv, false, false);
              },
            );
          },
        );
        f.block((done) => {
          f.brIf(done, op('i32.ge_u', out, end));
          f.loop((again) => {
            f.store('f32.store', out, op(scalarOp, load('f32.load', a), load('f32.load', b)));
            f.set(a, op('i32.add', a, aBytes));
            f.set(b, op('i32.add', b, bBytes));
            f.set(out, op('i32.add', out, 4));
            f.brIf(again, op('i32.lt_u', out, end));
          });
        });
        f.set(aStart, op('i32.add', aStart, aRow));
        f.set(bStart, op('i32.add', bStart, bRow));
      });
    },
  });
}

/** One kernel per elementwise op. */
export const ELEMENTWISE = ELEMENTWISE_OPS.map(elementwise);
