import type { InputStatistics } from '../calibration/input-statistics';
import { f16ToF32, f32ToF16Bits } from '../half';
import { BLOCK, Q4_0_BLOCK_BYTES, writeQ4_0Block } from './quantize';

/** Q4_0 levels: d · q for integers q in [-8, 7]. */
const LOW = -8;
const HIGH = 7;
/** Damping added to the moments' diagonal, as a fraction of its mean: keeps M invertible where inputs are rare. */
const DAMPING = 0.01;
/** Candidate scales per block: extreme / -(8 + STEP · s) for s in [-STEPS, STEPS]. */
const STEPS = 10;
const STEP = 0.1;

const level = (x: number, d: number) => Math.max(LOW, Math.min(HIGH, Math.round(x / d)));
const toHalf = (d: number) => f16ToF32(Uint16Array.of(f32ToF16Bits(d)))[0];

/**
 * The float16 scale of one block of 32 values that minimises Σ w_i (x_i - d q_i)² over a grid of candidates around
 * extreme / -8 (each candidate's levels refitted by least squares): the weights w_i are the input's importance
 * E[x_i²] times sqrt(mean square + x_i²), favouring the values that matter to the output and the large ones.
 * `weights` is scratch space of BLOCK values.
 */
function blockScale(
  x: Float64Array,
  at: number,
  importance: Float64Array,
  column: number,
  weights: Float64Array,
): number {
  let extreme = 0;
  let meanSquare = 0;
  for (let i = 0; i < BLOCK; i++) {
    const v = x[at + i];
    if (Math.abs(v) > Math.abs(extreme)) extreme = v;
    meanSquare += v * v;
  }
  if (extreme === 0) return 0;
  meanSquare /= BLOCK;
  for (let i = 0; i < BLOCK; i++)
    weights[i] = importance[column + i] * Math.sqrt(meanSquare + x[at + i] ** 2);
  let best = extreme / LOW;
  let bestError = Number.POSITIVE_INFINITY;
  for (let s = -STEPS; s <= STEPS; s++) {
    const inverse = -(-LOW + STEP * s) / extreme;
    let xq = 0;
    let qq = 0;
    for (let i = 0; i < BLOCK; i++) {
      const q = Math.max(LOW, Math.min(HIGH, Math.round(x[at + i] * inverse)));
      xq += weights[i] * x[at + i] * q;
      qq += weights[i] * q * q;
    }
    // The refitted scale's error, Σ w x² - (Σ w x q)² / Σ w q², up to the term common to every candidate.
    if (qq === 0) continue;
    const error = -(xq * xq) / qq;
    if (error < bestError) {
      bestError = error;
      best = xq / qq;
    }
  }
  return toHalf(best);
}

/**
 * The upper triangular U with Uᵀ U = (M + damping)⁻¹, from M [n, n]: GPTQ's factor, whose row j spreads the
 * rounding error of column j over the columns after it (U[j, k] / U[j, j]). With J the reversal of the
 * indices, J M J = L Lᵀ (Cholesky) gives M = R Rᵀ with R = J L J upper triangular, so M⁻¹ = R⁻ᵀ R⁻¹ and
 * U = R⁻¹ = J L⁻¹ J: one factorisation and one triangular inverse, both read along rows.
 */
function inverseFactor(moments: Float64Array, n: number): Float64Array {
  let mean = 0;
  for (let i = 0; i < n; i++) mean += moments[i * n + i];
  const damping = (DAMPING * mean) / n || 1;
  // l: the lower Cholesky factor of J M J, built row by row (l[i, j] for j <= i).
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const mi = n - 1 - i;
    for (let j = 0; j <= i; j++) {
      const mj = n - 1 - j;
      let s = moments[mi * n + mj];
      if (i === j) s = (s || 1) + damping;
      for (let k = 0; k < j; k++) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = i === j ? Math.sqrt(s) : s / l[j * n + j];
    }
  }
  // t = (l⁻¹)ᵀ, upper triangular, row by row: l⁻¹[i, j] = -(Σ_{j<=k<i} l[i, k] l⁻¹[k, j]) / l[i, i].
  const t = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    t[i * n + i] = 1 / l[i * n + i];
    for (let j = 0; j < i; j++) {
      let s = 0;
      for (let k = j; k < i; k++) s -= l[i * n + k] * t[j * n + k];
      t[j * n + i] = s / l[i * n + i];
    }
  }
  // U[i, j] = l⁻¹[n-1-i, n-1-j] = t[n-1-j, n-1-i].
  const u = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) u[i * n + j] = t[(n - 1 - j) * n + (n - 1 - i)];
  return u;
}

/** w[r, k] -= Σ_i spread[r, i] slab[k - end, i] for every row r and column k >= end (w [rows, n], spread [rows, BLOCK]). */
function spreadOnto(
  w: Float64Array,
  spread: Float64Array,
  slab: Float64Array,
  rows: number,
  n: number,
  end: number,
): void {
  for (let r = 0; r < rows; r++) {
    const row = r * n;
    const e = r * BLOCK;
    for (let k = end; k < n; k++) {
      const at = (k - end) * BLOCK;
      // Four running sums: one would wait on each addition before the next.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let i = 0; i < BLOCK; i += 4) {
        s0 += spread[e + i] * slab[at + i];
        s1 += spread[e + i + 1] * slab[at + i + 1];
        s2 += spread[e + i + 2] * slab[at + i + 2];
        s3 += spread[e + i + 3] * slab[at + i + 3];
      }
      w[row + k] -= s0 + s1 + (s2 + s3);
    }
  }
}

/** Each full statistics' factor, computed once for the layers that share an input (a block's q, k and v). */
const factors = new WeakMap<InputStatistics, Float64Array>();

function factorOf(statistics: InputStatistics): Float64Array {
  const known = factors.get(statistics);
  if (known) return known;
  const u = inverseFactor(statistics.moments, statistics.size);
  factors.set(statistics, u);
  return u;
}

/**
 * Q4_0 blocks of a weight [rows, size] (row-major, rows of whole blocks) that keep the layer's outputs close on
 * calibration inputs rather than the weights themselves: with full moments, GPTQ (Frantar et al., 2022) — each row
 * is rounded column by column and every rounding error is compensated on the columns not yet rounded, through the
 * inverse of the inputs' second moments; each block's scale is chosen (`blockScale`) when its first column is reached.
 * With diagonal moments no error moves between columns and this is importance-weighted rounding. The bytes are
 * GGUF's Q4_0 blocks, as `quantize(values, 'Q4_0')` lays them out.
 */
export function quantizeQ4_0Calibrated(values: Float32Array, statistics: InputStatistics): Uint8Array {
  const n = statistics.size;
  if (n % BLOCK !== 0 || values.length % n !== 0) {
    throw new Error(
      `quantizeQ4_0Calibrated: ${values.length} values are not rows of ${n} (the statistics' input size) in whole blocks of ${BLOCK}`,
    );
  }
  const full = statistics.kind === 'full';
  const expected = full ? n * n : n;
  if (statistics.moments.length !== expected) {
    throw new Error(
      `quantizeQ4_0Calibrated: ${statistics.kind} statistics of ${n} features hold ${statistics.moments.length} moments; expected ${expected}`,
    );
  }
  const u = full ? factorOf(statistics) : undefined;
  const importance = full
    ? Float64Array.from({ length: n }, (_, i) => statistics.moments[i * n + i])
    : statistics.moments;
  const rows = values.length / n;
  const blocks = n / BLOCK;
  const out = new Uint8Array(rows * blocks * Q4_0_BLOCK_BYTES);
  const w = Float64Array.from(values); // [rows, n], the columns not yet rounded carry the errors spread onto them
  const spread = new Float64Array(rows * BLOCK); // [rows, BLOCK]: each rounded column's error / U[j, j]
  const levels = new Uint8Array(BLOCK); // q - LOW, as the block stores them
  const weights = new Float64Array(BLOCK);
  const slab = new Float64Array(u === undefined ? 0 : (n - BLOCK) * BLOCK);
  // Block by block for all rows, so the BLOCK rows of U a block spreads with stay in cache across the rows.
  for (let b = 0; b < blocks; b++) {
    const start = b * BLOCK;
    const end = start + BLOCK;
    for (let r = 0; r < rows; r++) {
      const row = r * n;
      const d = blockScale(w, row + start, importance, start, weights);
      for (let i = 0; i < BLOCK; i++) {
        const j = start + i;
        const q = d === 0 ? 0 : level(w[row + j], d);
        levels[i] = q - LOW;
        if (u === undefined) continue;
        const e = (w[row + j] - d * q) / u[j * n + j];
        spread[r * BLOCK + i] = e;
        for (let k = j + 1; k < end; k++) w[row + k] -= e * u[j * n + k];
      }
      writeQ4_0Block(out, (r * blocks + b) * Q4_0_BLOCK_BYTES, d, levels);
    }
    if (u === undefined || end === n) continue;
    // The block's errors onto the columns after it: w[:, end:] -= spread · U[start:end, end:], with that slab of U
    // laid out transposed ([n - end, BLOCK]) so each column's BLOCK terms are read in a row and summed before one store.
    for (let k = end; k < n; k++)
      for (let i = 0; i < BLOCK; i++) slab[(k - end) * BLOCK + i] = u[(start + i) * n + k];
    spreadOnto(w, spread, slab, rows, n, end);
  }
  return out;
}
