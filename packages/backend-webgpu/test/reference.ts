/** Float64 reference implementations for checking kernels beyond the conformance tolerances. */

/** a [m, k] x b [k, n] (b given as [n, k] when `transB`). */
export function matmul64(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  m: number,
  n: number,
  k: number,
  transB: boolean,
) {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * (transB ? b[j * k + p] : b[p * n + j]);
      out[i * n + j] = s;
    }
  }
  return out;
}

export function softmax64(row: ArrayLike<number>): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  const out = Float64Array.from(row, (v) => Math.exp(v - max));
  const total = out.reduce((a, b) => a + b, 0);
  return out.map((v) => v / total);
}

export interface AttentionShape {
  readonly b: number;
  readonly t: number;
  readonly s: number;
  readonly h: number;
  readonly hkv: number;
  readonly hd: number;
  readonly offset: number;
}

/** Causal grouped-query attention: q [B, T, H, hd], k and v [B, S, Hkv, hd]. */
export function attention64(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  shape: AttentionShape,
) {
  const { b, t, s, h, hkv, hd, offset } = shape;
  const out = new Float64Array(b * t * h * hd);
  const scale = 1 / Math.sqrt(hd);
  for (let bi = 0; bi < b; bi++) {
    for (let ti = 0; ti < t; ti++) {
      for (let hi = 0; hi < h; hi++) {
        const g = Math.floor(hi / (h / hkv));
        const qBase = ((bi * t + ti) * h + hi) * hd;
        const visible = Math.min(s, offset + ti + 1);
        const scores = new Float64Array(visible);
        for (let si = 0; si < visible; si++) {
          const kBase = ((bi * s + si) * hkv + g) * hd;
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += q[qBase + d] * k[kBase + d];
          scores[si] = dot * scale;
        }
        const p = softmax64(scores);
        for (let si = 0; si < visible; si++) {
          const vBase = ((bi * s + si) * hkv + g) * hd;
          for (let d = 0; d < hd; d++) out[qBase + d] += p[si] * v[vBase + d];
        }
      }
    }
  }
  return out;
}

/** Largest |a - b| over two arrays of equal length. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} and ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** Seeded values in [-1, 1) from a small linear congruential generator. */
export function seeded(n: number, seed: number): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 31 - 1;
  });
}
