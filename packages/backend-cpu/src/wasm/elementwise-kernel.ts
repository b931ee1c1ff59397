import { type Expr, emitOperand, load, type Operand, op, simdLoad } from './expr';
import { writeUnsigned } from './leb128';
import type { ModuleBuilder } from './module-builder';
import { SIMD_PREFIX, ValType } from './opcodes';

/** The f32 binary ops with a WebAssembly kernel. */
export const ELEMENTWISE_OPS = ['add', 'sub', 'mul', 'div'] as const;
export type ElementwiseOp = (typeof ELEMENTWISE_OPS)[number];

/** Exported kernel name of each op. */
export const ELEMENTWISE_KERNELS = {
  add: 'binary_add_f32',
  sub: 'binary_sub_f32',
  mul: 'binary_mul_f32',
  div: 'binary_div_f32',
} as const satisfies Record<ElementwiseOp, string>;

/** Parameters of each elementwise kernel, in order (pointers in bytes, steps 0 or 1, n in elements). */
export const ELEMENTWISE_PARAMS = ['a', 'aStep', 'b', 'bStep', 'out', 'n'] as const;

/** The scalar and the f32x4 opcode of each op (the SIMD one follows SIMD_PREFIX as LEB128). */
const OPCODES: Readonly<Record<ElementwiseOp, { scalar: number; simd: number }>> = {
  add: { scalar: 0x92, simd: 0xe4 },
  sub: { scalar: 0x93, simd: 0xe5 },
  mul: { scalar: 0x94, simd: 0xe6 },
  div: { scalar: 0x95, simd: 0xe7 },
};

const I = ValType.i32;

function scalarOp(code: number, a: Operand, b: Operand): Expr {
  return {
    kind: 'expr',
    emit: (out) => {
      emitOperand(out, a);
      emitOperand(out, b);
      out.push(code);
    },
  };
}

function simdOp(code: number, a: Operand, b: Operand): Expr {
  return {
    kind: 'expr',
    emit: (out) => {
      emitOperand(out, a);
      emitOperand(out, b);
      out.push(SIMD_PREFIX);
      writeUnsigned(out, code);
    },
  };
}

/**
 * Adds one kernel per op: out[i] = a[i·aStep] ⊕ b[i·bStep] for i < n, four lanes at a time
 * then a scalar tail. An input with step 0 is splatted once before the loop; the three step
 * patterns get their own loop so none branches per element.
 */
export function emitElementwise(mod: ModuleBuilder): void {
  for (const name of ELEMENTWISE_OPS) {
    const codes = OPCODES[name];
    mod.func(
      ELEMENTWISE_KERNELS[name],
      ELEMENTWISE_PARAMS.map(() => I),
      (f) => {
        const [a, aStep, b, bStep, out, n] = f.params;
        const [end, vecEnd, aBytes, bBytes] = f.locals(I, 4);
        const [av, bv] = f.locals(ValType.v128, 2);
        f.set(end, op('i32.add', out, op('i32.shl', n, 2)));
        f.set(vecEnd, op('i32.add', out, op('i32.shl', op('i32.and', n, -4), 2)));
        f.set(aBytes, op('i32.shl', aStep, 2));
        f.set(bBytes, op('i32.shl', bStep, 2));
        const vectorLoop = (x: Operand, y: Operand, advanceA: boolean, advanceB: boolean) =>
          f.block((done) => {
            f.brIf(done, op('i32.ge_u', out, vecEnd));
            f.loop((again) => {
              f.storeV128(out, simdOp(codes.simd, x, y));
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
            f.store('f32.store', out, scalarOp(codes.scalar, load('f32.load', a), load('f32.load', b)));
            f.set(a, op('i32.add', a, aBytes));
            f.set(b, op('i32.add', b, bBytes));
            f.set(out, op('i32.add', out, 4));
            f.brIf(again, op('i32.lt_u', out, end));
          });
        });
      },
    );
  }
}
