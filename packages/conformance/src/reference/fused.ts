import type { AdamWSpec, AttentionSpec, Shape } from '@loom/tensor';
import { geluDerivative, sigmoid } from './elementwise';

/** Rows of length d of a flat array, as (offset) callbacks. */
function forRows(length: number, d: number, visit: (o: number) => void): void {
  const rows = d === 0 ? 0 : length / d;
  for (let r = 0; r < rows; r++) visit(r * d);
}

function rowMax(x: ArrayLike<number>, o: number, d: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < d; i++) if (x[o + i] > max) max = x[o + i];
  return max;
}

function mean(x: ArrayLike<number>, o: number, d: number): number {
  let s = 0;
  for (let i = 0; i < d; i++) s += x[o + i];
  return s / d;
}

/** 1 / sqrt(mean(x²) + eps) over one row. */
function rmsScale(x: ArrayLike<number>, o: number, d: number, eps: number): number {
  let s = 0;
  for (let i = 0; i < d; i++) s += x[o + i] * x[o + i];
  return 1 / Math.sqrt(s / d + eps);
}

/** Mean and 1 / sqrt(variance + eps) (population variance) over one row. */
function meanAndScale(x: ArrayLike<number>, o: number, d: number, eps: number): [number, number] {
  const mu = mean(x, o, d);
  let s = 0;
  for (let i = 0; i < d; i++) s += (x[o + i] - mu) ** 2;
  return [mu, 1 / Math.sqrt(s / d + eps)];
}

export function rmsnorm(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  const d = w.length;
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const r = rmsScale(x, o, d, eps);
    for (let i = 0; i < d; i++) out[o + i] = x[o + i] * r * w[i];
  });
  return out;
}

export function layernorm(x: Float64Array, w: Float64Array, b: Float64Array, eps: number): Float64Array {
  const d = w.length;
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const [mu, r] = meanAndScale(x, o, d, eps);
    for (let i = 0; i < d; i++) out[o + i] = (x[o + i] - mu) * r * w[i] + b[i];
  });
  return out;
}

/**
 * y = x r w with r = (mean(x²) + eps)^(-1/2); dr/dx_j = -r³ x_j / d, so
 * dx_j = r g_j w_j - (r³ x_j / d) Σ_i g_i w_i x_i.
 */
export function rmsnormGrad(x: Float64Array, w: Float64Array, g: Float64Array, eps: number): Float64Array {
  const d = w.length;
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const r = rmsScale(x, o, d, eps);
    let dot = 0;
    for (let i = 0; i < d; i++) dot += g[o + i] * w[i] * x[o + i];
    for (let j = 0; j < d; j++) out[o + j] = r * g[o + j] * w[j] - ((r ** 3 * x[o + j]) / d) * dot;
  });
  return out;
}

/** With n = (x - μ) r and dn = g w: dx = r (dn - mean(dn) - n mean(dn n)). */
export function layernormGrad(x: Float64Array, w: Float64Array, g: Float64Array, eps: number): Float64Array {
  const d = w.length;
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const [mu, r] = meanAndScale(x, o, d, eps);
    let sumDn = 0;
    let sumDnN = 0;
    for (let i = 0; i < d; i++) {
      sumDn += g[o + i] * w[i];
      sumDnN += g[o + i] * w[i] * (x[o + i] - mu) * r;
    }
    for (let i = 0; i < d; i++) {
      const n = (x[o + i] - mu) * r;
      out[o + i] = r * (g[o + i] * w[i] - sumDn / d - (n * sumDnN) / d);
    }
  });
  return out;
}

/** RMSNorm's weight gradient: Σ over rows of g · x r, r = 1 / sqrt(mean(x²) + eps). */
export function rmsnormWeightGrad(x: Float64Array, g: Float64Array, d: number, eps: number): Float64Array {
  const out = new Float64Array(d);
  forRows(x.length, d, (o) => {
    const r = rmsScale(x, o, d, eps);
    for (let i = 0; i < d; i++) out[i] += g[o + i] * x[o + i] * r;
  });
  return out;
}

/** LayerNorm's weight and bias gradients [2, d]: Σ over rows of g · (x - μ) r, then Σ over rows of g. */
export function layernormParamGrad(x: Float64Array, g: Float64Array, d: number, eps: number): Float64Array {
  const out = new Float64Array(2 * d);
  forRows(x.length, d, (o) => {
    const [mu, r] = meanAndScale(x, o, d, eps);
    for (let i = 0; i < d; i++) {
      out[i] += g[o + i] * (x[o + i] - mu) * r;
      out[d + i] += g[o + i];
    }
  });
  return out;
}

/** x [B, T, H, hd]: pair (2i, 2i+1) of position t of entry b turns by (offsets[b] + t) freqs[i], times `scale`. */
export function rope(
  x: Float64Array,
  shape: Shape,
  offsets: readonly number[],
  freqs: readonly number[],
  scale: number,
): Float64Array {
  const [b, t, h, hd] = shape;
  const out = new Float64Array(x.length);
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      for (let head = 0; head < h; head++) {
        const o = ((bi * t + p) * h + head) * hd;
        for (let i = 0; i < hd / 2; i++) {
          const angle = (offsets[bi] + p) * freqs[i];
          const [x0, x1] = [x[o + 2 * i], x[o + 2 * i + 1]];
          out[o + 2 * i] = scale * (x0 * Math.cos(angle) - x1 * Math.sin(angle));
          out[o + 2 * i + 1] = scale * (x0 * Math.sin(angle) + x1 * Math.cos(angle));
        }
      }
    }
  }
  return out;
}

/** Whether the query at `position` of batch row `row` may read key `key` under `spec`. */
function keyVisible(spec: AttentionSpec, row: number, position: number, key: number): boolean {
  const { mask } = spec;
  const allowed = mask.kind === 'none' || key <= position || (mask.kind === 'prefix' && key < mask.length);
  const inWindow = spec.window === 0 || position - key < spec.window;
  const valid = spec.keyLengths.length === 0 || key < spec.keyLengths[row];
  return allowed && inWindow && valid;
}

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd]: query head h reads kv head floor(h / (H / Hkv));
 * the query t of row bi, at position offset + t, sees the keys its mask, window and key length allow
 * (written out as a test per key, independently of the backends' range arithmetic). out [B, T, H, hd].
 */
export function attention(
  q: Float64Array,
  qShape: Shape,
  k: Float64Array,
  v: Float64Array,
  kShape: Shape,
  spec: AttentionSpec,
): Float64Array {
  const [b, t, h, hd] = qShape;
  const [, s, hkv] = kShape;
  const out = new Float64Array(q.length);
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      for (let head = 0; head < h; head++) {
        const kvHead = Math.floor(head / (h / hkv));
        const qo = ((bi * t + p) * h + head) * hd;
        const weights = new Float64Array(s);
        for (let j = 0; j < s; j++) {
          if (!keyVisible(spec, bi, spec.offset + p, j)) {
            weights[j] = Number.NEGATIVE_INFINITY;
            continue;
          }
          const ko = ((bi * s + j) * hkv + kvHead) * hd;
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += q[qo + d] * k[ko + d];
          weights[j] = spec.scale * dot;
        }
        if (weights.every((w) => w === Number.NEGATIVE_INFINITY)) continue; // sees no key: 0
        const probabilities = softmax(weights, s);
        for (let d = 0; d < hd; d++) {
          let acc = 0;
          for (let j = 0; j < s; j++) acc += probabilities[j] * v[((bi * s + j) * hkv + kvHead) * hd + d];
          out[qo + d] = acc;
        }
      }
    }
  }
  return out;
}

/**
 * The gradients of `attention` for the gradient g of its output: per query and head, its softmax weights P over
 * the visible keys, dS_j = P_j (g·v_j - Σ_i P_i g·v_i), then dq = scale Σ_j dS_j k_j, dk_j += scale dS_j q and
 * dv_j += P_j g. Returned flattened: dq, then dk, then dv.
 */
export function attentionGrad(
  q: Float64Array,
  qShape: Shape,
  k: Float64Array,
  v: Float64Array,
  kShape: Shape,
  g: Float64Array,
  spec: AttentionSpec,
): Float64Array {
  const [b, t, h, hd] = qShape;
  const [, s, hkv] = kShape;
  const out = new Float64Array(q.length + 2 * k.length);
  const [dk, dv] = [q.length, q.length + k.length];
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      for (let head = 0; head < h; head++) {
        const kvHead = Math.floor(head / (h / hkv));
        const qo = ((bi * t + p) * h + head) * hd;
        const at = (j: number) => ((bi * s + j) * hkv + kvHead) * hd;
        const scores = new Float64Array(s);
        for (let j = 0; j < s; j++) {
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += q[qo + d] * k[at(j) + d];
          scores[j] = keyVisible(spec, bi, spec.offset + p, j) ? spec.scale * dot : Number.NEGATIVE_INFINITY;
        }
        if (scores.every((w) => w === Number.NEGATIVE_INFINITY)) continue; // sees no key: no gradient
        const probabilities = softmax(scores, s);
        const dp = new Float64Array(s);
        let weighted = 0;
        for (let j = 0; j < s; j++) {
          for (let d = 0; d < hd; d++) dp[j] += g[qo + d] * v[at(j) + d];
          weighted += probabilities[j] * dp[j];
        }
        for (let j = 0; j < s; j++) {
          const ds = probabilities[j] * (dp[j] - weighted);
          for (let d = 0; d < hd; d++) {
            out[qo + d] += spec.scale * ds * k[at(j) + d];
            out[dk + at(j) + d] += spec.scale * ds * q[qo + d];
            out[dv + at(j) + d] += probabilities[j] * g[qo + d];
          }
        }
      }
    }
  }
  return out;
}

export function swiglu(gate: Float64Array, up: Float64Array): Float64Array {
  return gate.map((g, i) => g * sigmoid(g) * up[i]);
}

/** d gate = grad · up · silu'(gate): swiglu's gate gradient (its up gradient is swiglu(gate, grad)). */
export function swigluGrad(gate: Float64Array, up: Float64Array, grad: Float64Array): Float64Array {
  return gate.map((g, i) => {
    const s = sigmoid(g);
    return grad[i] * up[i] * s * (1 + g * (1 - s));
  });
}

export function geluGrad(x: Float64Array, grad: Float64Array): Float64Array {
  return x.map((xi, i) => grad[i] * geluDerivative(xi));
}

/** exp(x - max) / Σ exp(x - max) over rows of length d. */
export function softmax(x: Float64Array, d: number): Float64Array {
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const max = rowMax(x, o, d);
    let sum = 0;
    for (let i = 0; i < d; i++) sum += Math.exp(x[o + i] - max);
    for (let i = 0; i < d; i++) out[o + i] = Math.exp(x[o + i] - max) / sum;
  });
  return out;
}

/** x - max - log Σ exp(x - max) over rows of length d. */
export function logSoftmax(x: Float64Array, d: number): Float64Array {
  const out = new Float64Array(x.length);
  forRows(x.length, d, (o) => {
    const max = rowMax(x, o, d);
    let sum = 0;
    for (let i = 0; i < d; i++) sum += Math.exp(x[o + i] - max);
    for (let i = 0; i < d; i++) out[o + i] = x[o + i] - max - Math.log(sum);
  });
  return out;
}

/** Mean over rows whose target is not `ignoreIndex` of -log softmax(logits [N, V])[target]; 0 when none counts. */
export function softmaxCrossEntropy(
  logits: Float64Array,
  targets: Int32Array,
  vocab: number,
  ignoreIndex: number,
): number {
  const logProbabilities = logSoftmax(logits, vocab);
  let total = 0;
  let count = 0;
  targets.forEach((target, row) => {
    if (target === ignoreIndex) return;
    count++;
    if (target >= 0 && target < vocab) total -= logProbabilities[row * vocab + target];
  });
  return count === 0 ? 0 : total / count;
}

/**
 * The gradient of `softmaxCrossEntropy` for the gradient `grad` of the loss: on each row whose target is not
 * `ignoreIndex`, (softmax of the row - 1 at its target, if in [0, vocab)) · grad / count (the rows counted, at
 * least 1); 0 on the ignored rows.
 */
export function softmaxCrossEntropyGrad(
  logits: Float64Array,
  targets: Int32Array,
  vocab: number,
  grad: number,
  ignoreIndex: number,
): Float64Array {
  const probabilities = softmax(logits, vocab);
  const count = targets.filter((target) => target !== ignoreIndex).length;
  const out = new Float64Array(logits.length);
  targets.forEach((target, row) => {
    if (target === ignoreIndex) return;
    for (let i = 0; i < vocab; i++) {
      const picked = i === target ? 1 : 0;
      out[row * vocab + i] = ((probabilities[row * vocab + i] - picked) * grad) / Math.max(count, 1);
    }
  });
  return out;
}

/** One AdamW step on f32 parameters (the gradient times gradScale), in place; every stored value rounds to float32. */
export function adamw(
  p: Float64Array,
  g: Float64Array,
  m: Float64Array,
  v: Float64Array,
  spec: AdamWSpec,
): void {
  const { lr, beta1, beta2, eps, weightDecay, c1, c2, gradScale = 1 } = spec;
  for (let i = 0; i < p.length; i++) {
    const gi = gradScale * g[i];
    m[i] = Math.fround(beta1 * m[i] + (1 - beta1) * gi);
    v[i] = Math.fround(beta2 * v[i] + (1 - beta2) * gi * gi);
    p[i] = Math.fround(p[i] * (1 - lr * weightDecay) - (lr * (m[i] / c1)) / (Math.sqrt(v[i] / c2) + eps));
  }
}

/**
 * Mamba's selective scan, step by step in time: per batch row a state h [D][N] starts at zero;
 * at each step h[d][n] = exp(Δ[d] A[d][n]) h[d][n] + Δ[d] B[n] x[d] and y[d] = Σ_n C[n] h[d][n] + D[d] x[d].
 * x, Δ, y [B, T, D]; A [D, N]; B, C [B, T, N]; D [D].
 */
export function selectiveScan(
  x: Float64Array,
  delta: Float64Array,
  a: Float64Array,
  b: Float64Array,
  c: Float64Array,
  dSkip: Float64Array,
  shape: Shape,
  n: number,
): Float64Array {
  const [batch, steps, d] = shape;
  const y = new Float64Array(batch * steps * d);
  for (let bi = 0; bi < batch; bi++) {
    const h = Array.from({ length: d }, () => new Float64Array(n));
    for (let t = 0; t < steps; t++) {
      const row = bi * steps + t;
      for (let i = 0; i < d; i++) {
        const step = delta[row * d + i];
        const input = x[row * d + i];
        let out = dSkip[i] * input;
        for (let k = 0; k < n; k++) {
          h[i][k] = Math.exp(step * a[i * n + k]) * h[i][k] + step * b[row * n + k] * input;
          out += c[row * n + k] * h[i][k];
        }
        y[row * d + i] = out;
      }
    }
  }
  return y;
}
