import type { AdamWSpec } from './backend';
import * as composite from './composite';
import { dispatchFused, dispatchFusedInPlace } from './dispatch';
import { assertDType } from './dtype';
import { sameBackend } from './guards';
import { normalizeAxis, shapesEqual, showShape } from './shape';
import type { Tensor } from './tensor';

function lastDimMatches(op: string, x: Tensor, param: Tensor, name: string): void {
  const d = x.shape[x.rank - 1];
  if (param.rank !== 1 || param.shape[0] !== d) {
    throw new Error(
      `${op}: ${name} must have shape [${d}] to match input ${showShape(x.shape)}, got ${showShape(param.shape)}`,
    );
  }
}

/** Softmax along `axis` (fused on the last axis where the backend has a kernel). */
export function softmax(x: Tensor, axis = -1): Tensor {
  assertDType('softmax', x.dtype, ['f32']);
  const a = normalizeAxis('softmax', axis, x.rank);
  if (a !== x.rank - 1) return composite.softmax(x, a);
  return dispatchFused(
    x,
    'softmax',
    (k) => k(x.info('softmax')),
    () => composite.softmax(x, a),
    x.shape,
    'f32',
  );
}

/** Log-softmax along `axis`, computed stably (x - max - log sum exp). */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  assertDType('logSoftmax', x.dtype, ['f32']);
  const a = normalizeAxis('logSoftmax', axis, x.rank);
  if (a !== x.rank - 1) return composite.logSoftmax(x, a);
  return dispatchFused(
    x,
    'logSoftmax',
    (k) => k(x.info('logSoftmax')),
    () => composite.logSoftmax(x, a),
    x.shape,
    'f32',
  );
}

/** RMS normalisation over the last axis, scaled by weight [d]. */
export function rmsnorm(x: Tensor, weight: Tensor, eps = 1e-5): Tensor {
  sameBackend('rmsnorm', x, weight);
  assertDType('rmsnorm', x.dtype, ['f32']);
  lastDimMatches('rmsnorm', x, weight, 'weight');
  return dispatchFused(
    x,
    'rmsnorm',
    (k) => k(x.info('rmsnorm'), weight.info('rmsnorm'), eps),
    () => composite.rmsnorm(x, weight, eps),
    x.shape,
    'f32',
  );
}

/** Layer normalisation over the last axis with weight and bias [d]. */
export function layernorm(x: Tensor, weight: Tensor, bias: Tensor, eps = 1e-5): Tensor {
  sameBackend('layernorm', x, weight, bias);
  assertDType('layernorm', x.dtype, ['f32']);
  lastDimMatches('layernorm', x, weight, 'weight');
  lastDimMatches('layernorm', x, bias, 'bias');
  return dispatchFused(
    x,
    'layernorm',
    (k) => k(x.info('layernorm'), weight.info('layernorm'), bias.info('layernorm'), eps),
    () => composite.layernorm(x, weight, bias, eps),
    x.shape,
    'f32',
  );
}

export interface RopeOptions {
  /** Position of the first row (tokens already in the cache). */
  readonly offset?: number;
  /** Base of the rotation frequencies. */
  readonly theta?: number;
}

/** Rotary position embedding of x [B, T, H, headDim], rotating pairs (2i, 2i+1). */
export function rope(x: Tensor, options: RopeOptions = {}): Tensor {
  const offset = options.offset ?? 0;
  const theta = options.theta ?? 10000;
  assertDType('rope', x.dtype, ['f32']);
  if (x.rank !== 4 || x.shape[3] % 2 !== 0) {
    throw new Error(
      `rope: expected x of shape [B, T, H, headDim] with an even headDim, got ${showShape(x.shape)}`,
    );
  }
  if (!Number.isInteger(offset) || offset < 0)
    throw new Error(`rope: offset must be a non-negative integer, got ${offset}`);
  return dispatchFused(
    x,
    'rope',
    (k) => k(x.info('rope'), offset, theta),
    () => composite.rope(x, offset, theta),
    x.shape,
    'f32',
  );
}

export interface AttentionOptions {
  /** Mask future keys (default true). */
  readonly causal?: boolean;
  /** Position of the first query among the keys; defaults to S - T (queries are the newest keys). */
  readonly offset?: number;
  /** Score multiplier; defaults to 1/sqrt(headDim). */
  readonly scale?: number;
}

/**
 * Scaled dot-product attention. q [B, T, H, hd], k and v [B, S, Hkv, hd] where Hkv divides H
 * (grouped-query heads: query head h reads kv head floor(h * Hkv / H)). Result [B, T, H, hd].
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor {
  sameBackend('attention', q, k, v);
  for (const t of [q, k, v]) assertDType('attention', t.dtype, ['f32']);
  const shapes = `q ${showShape(q.shape)}, k ${showShape(k.shape)}, v ${showShape(v.shape)}`;
  if (q.rank !== 4 || k.rank !== 4 || !shapesEqual(k.shape, v.shape)) {
    throw new Error(
      `attention: expected q [B, T, H, hd] and k, v [B, S, Hkv, hd] of equal shape; got ${shapes}`,
    );
  }
  const [b, t, h, hd] = q.shape;
  const [kb, s, hkv, khd] = k.shape;
  if (kb !== b || khd !== hd || hkv === 0 || h % hkv !== 0) {
    throw new Error(`attention: batch and head size must match and Hkv must divide H; got ${shapes}`);
  }
  const causal = options.causal ?? true;
  const offset = options.offset ?? s - t;
  if (causal && (!Number.isInteger(offset) || offset < 0 || offset + t > s)) {
    throw new Error(
      `attention: offset ${offset} with ${t} queries needs ${offset + t} keys, got ${s}; ${shapes}`,
    );
  }
  const scale = options.scale ?? 1 / Math.sqrt(hd);
  const spec = { causal, offset, scale };
  return dispatchFused(
    q,
    'attention',
    (kernel) => kernel(q.info('attention'), k.info('attention'), v.info('attention'), spec),
    () => composite.attention(q, k, v, causal, offset, scale),
    q.shape,
    'f32',
  );
}

/** silu(gate) * up. */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  sameBackend('swiglu', gate, up);
  assertDType('swiglu', gate.dtype, ['f32']);
  if (!shapesEqual(gate.shape, up.shape)) {
    throw new Error(
      `swiglu: gate ${showShape(gate.shape)} and up ${showShape(up.shape)} must have the same shape`,
    );
  }
  return dispatchFused(
    gate,
    'swiglu',
    (k) => k(gate.info('swiglu'), up.info('swiglu')),
    () => composite.swiglu(gate, up),
    gate.shape,
    'f32',
  );
}

/**
 * Mean cross-entropy of logits [N, V] against i32 targets [N]; rows whose target equals
 * `ignoreIndex` do not count; a target outside [0, V) that is not ignored counts with loss 0.
 * Returns a scalar (0 when every row is ignored).
 */
export function softmaxCrossEntropy(logits: Tensor, targets: Tensor, ignoreIndex = -100): Tensor {
  sameBackend('softmaxCrossEntropy', logits, targets);
  assertDType('softmaxCrossEntropy (logits)', logits.dtype, ['f32']);
  assertDType('softmaxCrossEntropy (targets)', targets.dtype, ['i32']);
  if (logits.rank !== 2 || targets.rank !== 1 || targets.shape[0] !== logits.shape[0]) {
    throw new Error(
      `softmaxCrossEntropy: expected logits [N, V] and targets [N], got ${showShape(logits.shape)} and ${showShape(targets.shape)}`,
    );
  }
  return dispatchFused(
    logits,
    'softmaxCrossEntropy',
    (k) => k(logits.info('softmaxCrossEntropy'), targets.info('softmaxCrossEntropy'), ignoreIndex),
    () => composite.softmaxCrossEntropy(logits, targets, ignoreIndex),
    [],
    'f32',
  );
}

/** grad * gelu'(x) (tanh approximation): the backward pass of `gelu`, fused where a backend can. */
export function geluGrad(x: Tensor, grad: Tensor): Tensor {
  sameBackend('geluGrad', x, grad);
  assertDType('geluGrad', x.dtype, ['f32']);
  if (!shapesEqual(x.shape, grad.shape)) {
    throw new Error(
      `geluGrad: x ${showShape(x.shape)} and grad ${showShape(grad.shape)} must have the same shape`,
    );
  }
  return dispatchFused(
    x,
    'geluGrad',
    (k) => k(x.info('geluGrad'), grad.info('geluGrad')),
    () => composite.geluGrad(x, grad),
    x.shape,
    'f32',
  );
}

function checkNormGrad(op: string, x: Tensor, weight: Tensor, grad: Tensor): void {
  sameBackend(op, x, weight, grad);
  assertDType(op, x.dtype, ['f32']);
  lastDimMatches(op, x, weight, 'weight');
  if (!shapesEqual(x.shape, grad.shape)) {
    throw new Error(
      `${op}: x ${showShape(x.shape)} and grad ${showShape(grad.shape)} must have the same shape`,
    );
  }
}

/** The input gradient of `rmsnorm(x, weight, eps)` for the output gradient `grad`. */
export function rmsnormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  checkNormGrad('rmsnormGrad', x, weight, grad);
  return dispatchFused(
    x,
    'rmsnormGrad',
    (k) => k(x.info('rmsnormGrad'), weight.info('rmsnormGrad'), grad.info('rmsnormGrad'), eps),
    () => composite.rmsnormGrad(x, weight, grad, eps),
    x.shape,
    'f32',
  );
}

/** The input gradient of `layernorm(x, weight, bias, eps)` for the output gradient `grad`. */
export function layernormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  checkNormGrad('layernormGrad', x, weight, grad);
  return dispatchFused(
    x,
    'layernormGrad',
    (k) => k(x.info('layernormGrad'), weight.info('layernormGrad'), grad.info('layernormGrad'), eps),
    () => composite.layernormGrad(x, weight, grad, eps),
    x.shape,
    'f32',
  );
}

/** One AdamW step of `param` in place, updating its moments `m` and `v` (all f32, one shape). */
export function adamw(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, spec: AdamWSpec): void {
  sameBackend('adamw', param, grad, m, v);
  for (const t of [param, grad, m, v]) {
    assertDType('adamw', t.dtype, ['f32']);
    if (!shapesEqual(t.shape, param.shape)) {
      throw new Error(
        `adamw: param ${showShape(param.shape)}, grad, m and v must share a shape; got ${showShape(t.shape)}`,
      );
    }
  }
  dispatchFusedInPlace(
    param,
    'adamw',
    (k) => k(param.info('adamw'), grad.info('adamw'), m.info('adamw'), v.info('adamw'), spec),
    () => composite.adamw(param, grad, m, v, spec),
  );
}
