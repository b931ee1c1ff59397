import { op, simdLoad, v128Zero } from './expr';
import { f32, i32, kernel } from './kernel-spec';
import { at, eachVector, inverseRms, rows, splat, squared, sums } from './norm-kernel';
import { ValType } from './opcodes';
import { add, mul, sub } from './vector-exp';

const I = ValType.i32;
const V = ValType.v128;

/**
 * `norm_param_grad_f32`: the parameter gradients of LayerNorm (`centred` 1) or RMSNorm (0) over `rows` rows of d
 * values (d a multiple of 4): acc[0, d) = Σ_rows grad · n with n the normalised row ((x - mean) / sqrt(var + eps),
 * or x / sqrt(mean(x²) + eps)), and for LayerNorm acc[d, 2d) = Σ_rows grad (the bias's). The rows' statistics
 * are summed in float64 as the norm kernels do; the sums over rows are f32, added in row order into `acc`,
 * which the kernel zeroes first (the caller adds the partial sums of several calls). Parameters: byte addresses of
 * x, grad and acc, the row count, d, the flag, eps.
 */
export const NORM_PARAM_GRAD = kernel({
  name: 'norm_param_grad_f32',
  params: [...i32('x', 'grad', 'acc', 'rows', 'd', 'centred'), ...f32('eps')],
  emit(f, { x, grad, acc, rows: count, d, centred, eps }) {
    const r = rows(f, d, eps);
    const row = f.local(I);
    const [sum, ss] = f.locals(ValType.f64, 2);
    const [mean, inv, g] = f.locals(V, 3);
    const weightAcc = () => op('i32.add', acc, r.j);
    const biasAcc = () => op('i32.add', op('i32.add', acc, r.rowBytes), r.j);
    eachVector(r, () => {
      f.storeV128(weightAcc(), v128Zero);
      f.storeV128(biasAcc(), v128Zero);
    });
    f.for(row, 0, count, 1, () => {
      f.if(
        centred,
        () => {
          sums(r, [(o) => at(r, x, o)], [sum]);
          f.set(mean, splat(op('f64.div', sum, r.d)));
          sums(r, [(o) => squared(sub(at(r, x, o), mean))], [ss]);
        },
        () => {
          f.set(mean, v128Zero);
          sums(r, [(o) => squared(at(r, x, o))], [ss]);
        },
      );
      f.set(inv, inverseRms(r, op('f64.div', ss, r.d)));
      f.if(
        centred,
        () =>
          eachVector(r, () => {
            f.set(g, at(r, grad));
            f.storeV128(
              weightAcc(),
              add(simdLoad('v128.load', weightAcc()), mul(g, mul(sub(at(r, x), mean), inv))),
            );
            f.storeV128(biasAcc(), add(simdLoad('v128.load', biasAcc()), g));
          }),
        () =>
          eachVector(r, () =>
            f.storeV128(
              weightAcc(),
              add(simdLoad('v128.load', weightAcc()), mul(at(r, grad), mul(at(r, x), inv))),
            ),
          ),
      );
      for (const p of [x, grad]) f.set(p, op('i32.add', p, r.rowBytes));
    });
  },
});

export const NORM_PARAM_GRAD_KERNEL = NORM_PARAM_GRAD.name;
