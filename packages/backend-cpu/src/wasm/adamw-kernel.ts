import { type Local, op, simd, simdLoad } from './expr';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { add, div, mul, sub } from './vector-exp';

const I = ValType.i32;

/**
 * One AdamW step, four elements at a time: m = β1 m + (1 - β1) s g, v = β2 v + (1 - β2) s² g²,
 * p = p · decay - step · m / (sqrt(v / c2) + eps), as the JavaScript kernel, for the gradient's scale s (a clip's
 * factor). Parameters: byte addresses of the parameter, gradient, first and second moments (updated in place), the
 * element count (a multiple of 4), then beta1, (1 - beta1) s, beta2, (1 - beta2) s², the decay factor
 * 1 - lr · weightDecay, the step lr / c1, 1 / c2 and eps.
 */
export const ADAMW = kernel({
  name: 'adamw_f32',
  params: [
    ...i32('p', 'g', 'm', 'v', 'n'),
    ...f32('beta1', 'gradFactor1', 'beta2', 'gradFactor2', 'decay', 'step', 'invC2', 'eps'),
  ],
  emit(f, params) {
    const { p, g, m, v, n } = params;
    const splat = (scalar: Local) => {
      const vector = f.local(ValType.v128);
      f.set(vector, simd('f32x4.splat', scalar));
      return vector;
    };
    const beta1 = splat(params.beta1);
    const gradFactor1 = splat(params.gradFactor1);
    const beta2 = splat(params.beta2);
    const gradFactor2 = splat(params.gradFactor2);
    const decay = splat(params.decay);
    const step = splat(params.step);
    const invC2 = splat(params.invC2);
    const eps = splat(params.eps);
    const [gv, mv, vv] = f.locals(ValType.v128, 3);
    const end = f.local(I);
    f.set(end, op('i32.add', p, op('i32.shl', n, 2)));
    const pointers: readonly Local[] = [p, g, m, v];
    f.block((done) => {
      f.brIf(done, op('i32.ge_u', p, end));
      f.loop((again) => {
        f.set(gv, simdLoad('v128.load', g));
        f.set(mv, add(mul(beta1, simdLoad('v128.load', m)), mul(gradFactor1, gv)));
        f.set(vv, add(mul(beta2, simdLoad('v128.load', v)), mul(gradFactor2, mul(gv, gv))));
        f.storeV128(m, mv);
        f.storeV128(v, vv);
        const denominator = add(simd('f32x4.sqrt', mul(vv, invC2)), eps);
        f.storeV128(p, sub(mul(simdLoad('v128.load', p), decay), div(mul(mv, step), denominator)));
        for (const q of pointers) f.set(q, op('i32.add', q, 16));
        f.brIf(again, op('i32.lt_u', p, end));
      });
    });
  },
});

export const ADAMW_KERNEL = ADAMW.name;
