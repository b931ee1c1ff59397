import { type Local, op, simd, simdLoad } from './expr';
import type { ModuleBuilder } from './module-builder';
import { ValType } from './opcodes';
import { add, div, mul, sub } from './vector-exp';

export const ADAMW_KERNEL = 'adamw_f32';

/**
 * Parameters, in order: byte addresses of the parameter, gradient, first and second moments
 * (updated in place), the element count (a multiple of 4), then as f32 bits: beta1, 1 - beta1,
 * beta2, 1 - beta2, the decay factor 1 - lr · weightDecay, the step lr / c1, 1 / c2 and eps.
 */
export const ADAMW_PARAMS = [
  'p',
  'g',
  'm',
  'v',
  'n',
  'beta1',
  'oneMinusBeta1',
  'beta2',
  'oneMinusBeta2',
  'decay',
  'step',
  'invC2',
  'eps',
] as const;

/**
 * One AdamW step, four elements at a time: m = β1 m + (1 - β1) g, v = β2 v + (1 - β2) g²,
 * p = p · decay - step · m / (sqrt(v / c2) + eps), as the JavaScript kernel.
 */
export function emitAdamw(mod: ModuleBuilder): void {
  const I = ValType.i32;
  mod.func(
    ADAMW_KERNEL,
    ADAMW_PARAMS.map(() => I),
    (f) => {
      const [p, g, m, v, n, ...bits] = f.params;
      const constants = f.locals(ValType.v128, bits.length);
      for (const [i, c] of constants.entries()) {
        f.set(c, simd('f32x4.splat', op('f32.reinterpret_i32', bits[i])));
      }
      const [beta1, oneMinusBeta1, beta2, oneMinusBeta2, decay, step, invC2, eps] = constants;
      const [gv, mv, vv] = f.locals(ValType.v128, 3);
      const end = f.local(I);
      f.set(end, op('i32.add', p, op('i32.shl', n, 2)));
      const pointers: readonly Local[] = [p, g, m, v];
      f.block((done) => {
        f.brIf(done, op('i32.ge_u', p, end));
        f.loop((again) => {
          f.set(gv, simdLoad('v128.load', g));
          f.set(mv, add(mul(beta1, simdLoad('v128.load', m)), mul(oneMinusBeta1, gv)));
          f.set(vv, add(mul(beta2, simdLoad('v128.load', v)), mul(oneMinusBeta2, mul(gv, gv))));
          f.storeV128(m, mv);
          f.storeV128(v, vv);
          const denominator = add(simd('f32x4.sqrt', mul(vv, invC2)), eps);
          f.storeV128(p, sub(mul(simdLoad('v128.load', p), decay), div(mul(mv, step), denominator)));
          for (const q of pointers) f.set(q, op('i32.add', q, 16));
          f.brIf(again, op('i32.lt_u', p, end));
        });
      });
    },
  );
}
