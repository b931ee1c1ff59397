import { op, shuffle32, simdLoad } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { add, mul } from './vector-exp';

const I = ValType.i32;

/**
 * RoPE on x [batches, T, heads, hd]: out = x · cos + swap(x) · sin, where swap exchanges the
 * two elements of every pair (2i, 2i + 1), so out[2i] = x[2i] cos - x[2i+1] sin and
 * out[2i+1] = x[2i+1] cos + x[2i] sin; the table row is the position t. Parameters: byte
 * addresses of x, of the cosine and signed-sine tables [T, hd] and of the output; then batches,
 * T, heads and hd (a multiple of 4). The tables hold each pair's value twice: cos θ, cos θ and
 * -sin θ, +sin θ.
 */
export const ROPE = kernel({
  name: 'rope_f32',
  params: i32('x', 'cos', 'sin', 'out', 'batches', 't', 'heads', 'hd'),
  emit(f, { x, cos, sin, out, batches, t, heads, hd }) {
    const [b, p, h, j, rowBytes, tableRow] = f.locals(I, 6);
    const v = f.local(ValType.v128);
    f.set(rowBytes, op('i32.shl', hd, 2));
    f.for(b, 0, batches, 1, () => {
      f.for(p, 0, t, 1, () => {
        f.set(tableRow, op('i32.mul', p, rowBytes));
        f.for(h, 0, heads, 1, () => {
          f.for(j, 0, rowBytes, 16, () => {
            const table = op('i32.add', tableRow, j);
            f.set(v, simdLoad('v128.load', op('i32.add', x, j)));
            f.storeV128(
              op('i32.add', out, j),
              add(
                mul(v, simdLoad('v128.load', op('i32.add', cos, table))),
                mul(shuffle32(v, v, [1, 0, 3, 2]), simdLoad('v128.load', op('i32.add', sin, table))),
              ),
            );
          });
          f.set(x, op('i32.add', x, rowBytes));
          f.set(out, op('i32.add', out, rowBytes));
        });
      });
    });
  },
});

export const ROPE_KERNEL = ROPE.name;
