import type { InputStatistics } from '../calibration/input-statistics';
import { f16ToF32, f32ToF16Bits } from '../half';
import { BLOCK } from './quantize';

/** Q4_0 levels: d · q for integers q in [-8, 7]. */
const LOW = -8;
const HIGH = 7;
const BLOCK_BYTES = 18;
/** Damping added to the moments' diagonal, as a fraction of its mean: keeps M invertible where inputs are rare. */
const DAMPING = 0.01;
/** Candidate scales per block: extreme / -(8 + STEP · s) for s in [-STEPS, STEPS]. */
const STEPS = 20;
const STEP = 0.05;

const level = (x: number, d: number) => Math.max(LOW, Math.min(HIGH, Math.round(x / d)));
const toHalf = (d: number) => f16ToF32(Uint16Array.of(f32ToF16Bits(d)))[0];

/**
 * The float16 scale of one block of 32 values that minimises Σ w_i (x_i - d q_i)² over a grid of candidates around
 * extreme / -8 (each candidate's levels refitted by least squares): the weights w_i are the input's importance
 * E[x_i²] times sqrt(mean square + x_i²), favouring the values that matter to the output and the large ones.
 */
function blockScale(x: Float64Array, at: number, importance: Float64Array, column: number): number {
  let extreme = 0;
  let meanSquare = 0;
  for (let i = 0; i < BLOCK; i++) {
    const v = x[at + i];
    if (Math.abs(v) > Math.abs(extreme)) extreme = v;
    meanSquare += v * v;
  }
  if (extreme === 0) return 0;
  meanSquare /= BLOCK;
  const w = new Float64Array(BLOCK);
  for (let i = 0; i < BLOCK; i++) w[i] = importance[column + i] * Math.sqrt(meanSquare + x[at + i] ** 2);
  let best = toHalf(extreme / LOW);
  let bestError = Number.POSITIVE_INFINITY;
  for (let s = -STEPS; s <= STEPS; s++) {
    const trial = extreme / -(-LOW + STEP * s);
    let xq = 0;
    let qq = 0;
    for (let i = 0; i < BLOCK; i++) {
      const q = level(x[at + i], trial);
      xq += w[i] * x[at + i] * q;
      qq += w[i] * q * q;
    }
    const d = qq > 0 ? toHalf(xq / qq) : 0;
    if (d === 0) continue;
    let error = 0;
    for (let i = 0; i < BLOCK; i++) error += w[i] * (x[at + i] - d * level(x[at + i], d)) ** 2;
    if (error < bestError) {
      bestError = error;
      best = d;
    }
  }
  return best;
}

/**
 * The upper triangular U with Uᵀ U = (M + damping)⁻¹, from M [n, n]: GPTQ's factor, whose row j spreads the
 * rounding error of column j over the columns after it (U[j, k] / U[j, j]).
 */
function inverseFactor(moments: Float64Array, n: number): Float64Array {
  const h = Float64Array.from(moments);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += h[i * n + i];
  const damping = (DAMPING * mean) / n || 1;
  for (let i = 0; i < n; i++) h[i * n + i] = (h[i * n + i] || 1) + damping;
  // Lower Cholesky factor L of h (L Lᵀ = h), in place of h's lower triangle.
  for (let j = 0; j < n; j++) {
    for (let i = j; i < n; i++) {
      let s = h[i * n + j];
      for (let k = 0; k < j; k++) s -= h[i * n + k] * h[j * n + k];
      h[i * n + j] = i === j ? Math.sqrt(s) : s / h[j * n + j];
    }
  }
  // L⁻¹, lower triangular, by forward substitution.
  const li = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    li[i * n + i] = 1 / h[i * n + i];
    for (let j = 0; j < i; j++) {
      let s = 0;
      for (let k = j; k < i; k++) s -= h[i * n + k] * li[k * n + j];
      li[i * n + j] = s / h[i * n + i];
    }
  }
  // h⁻¹ = L⁻ᵀ L⁻¹, then its upper factor U (Uᵀ U = h⁻¹), row by row.
  const inverse = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let k = j; k < n; k++) s += li[k * n + i] * li[k * n + j];
      inverse[i * n + j] = s;
      inverse[j * n + i] = s;
    }
  }
  const u = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    let s = inverse[i * n + i];
    for (let k = 0; k < i; k++) s -= u[k * n + i] ** 2;
    u[i * n + i] = Math.sqrt(s);
    for (let j = i + 1; j < n; j++) {
      let t = inverse[i * n + j];
      for (let k = 0; k < i; k++) t -= u[k * n + i] * u[k * n + j];
      u[i * n + j] = t / u[i * n + i];
    }
  }
  return u;
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
  const u = full ? factorOf(statistics) : undefined;
  const importance = full
    ? Float64Array.from({ length: n }, (_, i) => statistics.moments[i * n + i])
    : statistics.moments;
  const rows = values.length / n;
  const blocks = n / BLOCK;
  const out = new Uint8Array(rows * blocks * BLOCK_BYTES);
  const w = new Float64Array(n);
  const q = new Int8Array(BLOCK);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < n; i++) w[i] = values[r * n + i];
    for (let b = 0; b < blocks; b++) {
      const start = b * BLOCK;
      const d = blockScale(w, start, importance, start);
      for (let i = 0; i < BLOCK; i++) {
        const j = start + i;
        q[i] = d === 0 ? 0 : level(w[j], d);
        if (u === undefined) continue;
        const spread = (w[j] - d * q[i]) / u[j * n + j];
        for (let k = j + 1; k < n; k++) w[k] -= spread * u[j * n + k];
      }
      const at = (r * blocks + b) * BLOCK_BYTES;
      const bits = f32ToF16Bits(d);
      out[at] = bits & 0xff;
      out[at + 1] = bits >> 8;
      for (let i = 0; i < 16; i++) out[at + 2 + i] = (q[i] - LOW) | ((q[i + 16] - LOW) << 4);
    }
  }
  return out;
}
