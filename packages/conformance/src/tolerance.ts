import type { Tolerance } from '@loom/tensor';

/** Allowed difference |actual - expected| <= atol + rtol * |expected| (declared with the fused ops' cases). */
export type { Tolerance } from '@loom/tensor';
/** Elementwise arithmetic and simple transcendental functions; reductions and normalisations. */
export { ELEMENTWISE, REDUCTION } from '@loom/tensor';

/** Integer results and data movement must match exactly. */
export const EXACT: Tolerance = { atol: 0, rtol: 0 };
/**
 * sin and cos: WGSL allows an absolute error of 2^-11 on [-pi, pi]; GPU drivers use it.
 */
export const TRIG: Tolerance = { atol: 1e-3, rtol: 0 };

/** Matrix products: error grows with the inner dimension k. */
export function matmulTolerance(k: number): Tolerance {
  return { atol: 2e-5 * Math.sqrt(Math.max(k, 1)) * 4, rtol: 1e-4 };
}

/** Describes the first element outside the tolerance, or returns undefined if all are close. */
export function firstMismatch(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: Tolerance,
): string | undefined {
  if (actual.length !== expected.length) {
    return `length ${actual.length} differs from the reference length ${expected.length}`;
  }
  let worst = -1;
  let worstExcess = 0;
  let bad = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (Object.is(a, e) || (Number.isNaN(a) && Number.isNaN(e))) continue;
    const excess = Math.abs(a - e) - (tol.atol + tol.rtol * Math.abs(e));
    if (!(excess <= 0)) {
      bad++;
      if (worst < 0 || !(excess <= worstExcess)) {
        worst = i;
        worstExcess = excess;
      }
    }
  }
  if (bad === 0) return undefined;
  return `${bad} of ${actual.length} elements differ; worst at index ${worst}: got ${actual[worst]}, expected ${expected[worst]} (atol ${tol.atol}, rtol ${tol.rtol})`;
}
