import { NEG_INF_FN, NEG_INFINITY } from './math';
import { workgroupReduce } from './workgroup-reduce';

/**
 * The WGSL that softmax-style row kernels share, for a workgroup of `wg` threads owning one row of `x` that starts
 * at `base` and has `p.width` values: `declarations` go before the entry point (the workgroup max and sum
 * reductions), `statements` inside it (from uniform control flow) leave in every thread `m`, the row maximum, and
 * `s`, the sum of exp(x - m) over the row, so that exp(x - m) / s is the softmax and x - m - log(s) its log.
 */
export function rowMaxSumExp(wg: number): { readonly declarations: string; readonly statements: string } {
  return {
    declarations: `${NEG_INF_FN}
${workgroupReduce('max_all', 'f32', wg, 'max(a, b)')}
${workgroupReduce('sum_all', 'f32', wg, 'a + b')}`,
    statements: `  var m = ${NEG_INFINITY};
  for (var j = lid; j < p.width; j += ${wg}u) { m = max(m, x[base + j]); }
  m = max_all(m, lid);
  var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) { s += exp(x[base + j] - m); }
  s = sum_all(s, lid);`,
  };
}
