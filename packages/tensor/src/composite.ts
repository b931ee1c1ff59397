import type { AdamWSpec } from './backend';
import { arange, full } from './creation';
import {
  add,
  cast,
  compare,
  div,
  exp,
  log,
  mul,
  ne,
  neg,
  pow,
  rsqrt,
  silu,
  sqrt,
  sub,
  where,
} from './elementwise';
import { softmax as fusedSoftmax } from './fused';
import { matmul } from './matmul';
import { assign, concat, permute, slice } from './movement';
import { max, mean, sum } from './reduce';
import { scope } from './scope';
import type { Tensor } from './tensor';

/**
 * Fused ops written with primitives only. Every backend runs these when it has no fused
 * kernel, and the conformance kit checks fused kernels against them.
 */

export function softmax(x: Tensor, axis: number): Tensor {
  return scope(() => {
    const shifted = sub(x, max(x, axis, true));
    const e = exp(shifted);
    return div(e, sum(e, axis, true));
  });
}

export function logSoftmax(x: Tensor, axis: number): Tensor {
  return scope(() => {
    const shifted = sub(x, max(x, axis, true));
    return sub(shifted, log(sum(exp(shifted), axis, true)));
  });
}

export function rmsnorm(x: Tensor, weight: Tensor, eps: number): Tensor {
  return scope(() => {
    const inv = rsqrt(add(mean(mul(x, x), -1, true), eps));
    return mul(mul(x, inv), weight);
  });
}

export function layernorm(x: Tensor, weight: Tensor, bias: Tensor, eps: number): Tensor {
  return scope(() => {
    const centred = sub(x, mean(x, -1, true));
    const inv = rsqrt(add(mean(mul(centred, centred), -1, true), eps));
    return add(mul(mul(centred, inv), weight), bias);
  });
}

/** x [B, T, H, hd]: pairs (2i, 2i+1) rotate by angle (offset + t) * theta^(-2i/hd). */
export function rope(x: Tensor, offset: number, theta: number): Tensor {
  return scope(() => {
    const [b, t, h, hd] = x.shape;
    const half = hd / 2;
    const freq = pow(
      full([half], theta, { backend: x.backend }),
      arange(half, 0, -2 / hd, { backend: x.backend }),
    ); // [half]
    const positions = arange(t, offset, 1, { backend: x.backend }).reshape([t, 1]); // [T, 1]
    const angle = mul(positions, freq).reshape([t, 1, half]); // [T, 1, half]
    const cos = angle.cos();
    const sin = angle.sin();
    const pairs = x.reshape([b, t, h, half, 2]); // [B, T, H, half, 2]
    const even = slice(pairs, [0, 0, 0, 0, 0], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const odd = slice(pairs, [0, 0, 0, 0, 1], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const outEven = sub(mul(even, cos), mul(odd, sin)).reshape([b, t, h, half, 1]);
    const outOdd = add(mul(even, sin), mul(odd, cos)).reshape([b, t, h, half, 1]);
    return concat([outEven, outOdd], 4).reshape([b, t, h, hd]); // [B, T, H, hd]
  });
}

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd]; query heads h share kv head floor(h / (H / Hkv)).
 * The score softmax goes through the dispatcher: the backend's fused kernel (with its own
 * backward rule while recording) where there is one, else the softmax composite above.
 */
export function attention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  causal: boolean,
  offset: number,
  scale: number,
): Tensor {
  return scope(() => {
    const [b, t, h, hd] = q.shape;
    const s = k.shape[1];
    const hkv = k.shape[2];
    const group = h / hkv;
    const scaled = mul(q, scale).reshape([b, t, hkv, group, hd]); // [B, T, Hkv, g, hd]
    const qg = permute(scaled, [0, 2, 3, 1, 4]).reshape([b, hkv, group * t, hd]); // [B, Hkv, g*T, hd]
    const kh = permute(k, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    const vh = permute(v, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    let scores = matmul(qg, kh, { transB: true }).reshape([b, hkv, group, t, s]); // [B, Hkv, g, T, S]
    if (causal) {
      const queryPos = arange(t, offset, 1, { backend: q.backend, dtype: 'i32' }).reshape([t, 1]); // [T, 1]
      const keyPos = arange(s, 0, 1, { backend: q.backend, dtype: 'i32' }).reshape([1, s]); // [1, S]
      const zero = full([], 0, { backend: q.backend });
      const bias = where(compare('le', keyPos, queryPos), zero, Number.NEGATIVE_INFINITY); // [T, S]
      scores = add(scores, bias);
    }
    const probs = fusedSoftmax(scores, -1).reshape([b, hkv, group * t, s]); // [B, Hkv, g*T, S]
    const out = matmul(probs, vh).reshape([b, hkv, group, t, hd]); // [B, Hkv, g, T, hd]
    return permute(out, [0, 3, 1, 2, 4]).reshape([b, t, h, hd]); // [B, T, H, hd]
  });
}

export function swiglu(gate: Tensor, up: Tensor): Tensor {
  return scope(() => mul(silu(gate), up));
}

/** Mean of -log softmax(logits [N, V])[target] over rows whose target is not `ignoreIndex`. */
export function softmaxCrossEntropy(logits: Tensor, targets: Tensor, ignoreIndex: number): Tensor {
  return scope(() => {
    const [n, v] = logits.shape;
    const logp = logSoftmax(logits, -1); // [N, V]
    const vocab = arange(v, 0, 1, { backend: logits.backend, dtype: 'i32' }).reshape([1, v]); // [1, V]
    const onehot = cast(compare('eq', vocab, targets.reshape([n, 1])), 'f32'); // [N, V]
    const picked = sum(mul(logp, onehot), -1); // [N]
    const valid = cast(ne(targets, ignoreIndex), 'f32'); // [N]
    const count = full([], 1, { backend: logits.backend }).maximum(sum(valid));
    return neg(div(sum(mul(picked, valid)), count));
  });
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** grad * d/dx [0.5 x (1 + tanh(c (x + 0.044715 x^3)))]. */
export function geluGrad(x: Tensor, grad: Tensor): Tensor {
  return scope(() => {
    const x2 = mul(x, x);
    const t = mul(add(x, mul(mul(x2, x), 0.044715)), GELU_C).tanh();
    const dInner = mul(add(mul(x2, 3 * 0.044715), 1), GELU_C);
    const slope = add(mul(add(t, 1), 0.5), mul(mul(mul(x, 0.5), mul(t, t).neg().add(1)), dInner));
    return mul(grad, slope);
  });
}

/** With r = rsqrt(mean(x^2) + eps), n = x r and dn = grad * weight: dx = r (dn - n mean(dn n)). */
export function rmsnormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps: number): Tensor {
  return scope(() => {
    const r = rsqrt(add(mean(mul(x, x), -1, true), eps));
    const normed = mul(x, r);
    const dn = mul(grad, weight);
    return mul(r, sub(dn, mul(normed, mean(mul(dn, normed), -1, true))));
  });
}

/** With n = (x - mean) r and dn = grad * weight: dx = r (dn - mean(dn) - n mean(dn n)). */
export function layernormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps: number): Tensor {
  return scope(() => {
    const centred = sub(x, mean(x, -1, true));
    const r = rsqrt(add(mean(mul(centred, centred), -1, true), eps));
    const normed = mul(centred, r);
    const dn = mul(grad, weight);
    return mul(r, sub(sub(dn, mean(dn, -1, true)), mul(normed, mean(mul(dn, normed), -1, true))));
  });
}

/** AdamW's update of param, m and v in place (see FusedKernels.adamw). */
export function adamw(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, spec: AdamWSpec): void {
  scope(() => {
    const m1 = add(mul(m, spec.beta1), mul(grad, 1 - spec.beta1));
    const v1 = add(mul(v, spec.beta2), mul(mul(grad, grad), 1 - spec.beta2));
    const update = div(mul(m1, spec.lr / spec.c1), add(sqrt(mul(v1, 1 / spec.c2)), spec.eps));
    const decayed = spec.weightDecay > 0 ? mul(param, 1 - spec.lr * spec.weightDecay) : param;
    assign(m, m1);
    assign(v, v1);
    assign(param, sub(decayed, update));
  });
}
