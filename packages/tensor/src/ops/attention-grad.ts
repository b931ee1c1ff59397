import { zeros } from '../creation';
import { matmul } from '../matmul';
import { assign, permute } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { attentionCases } from './attention-cases';
import type { AttentionSpec } from './attention-mask';
import { type AttentionOptions, attentionSpec } from './attention-options';
import { attentionWeights, fromGroups, toGroups } from './attention-weights';
import { runFusedInPlace } from './dispatch';
import { inPlaceOp } from './op';
import { softmaxGrad } from './softmax-grad';

/**
 * The gradients of attention's q, k and v for the gradient g of its output, by kv head: P and the scaled q from
 * the forward's composite, dP = g vᵀ, dS = softmaxGrad(P, dP), dq = scale dS k, dk = dSᵀ (scale q), dv = Pᵀ g
 * (the sums over a kv head's query heads fall out of the products), added to dq, dk and dv.
 */
function attendGrad(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  grad: Tensor,
  dq: Tensor,
  dk: Tensor,
  dv: Tensor,
  spec: AttentionSpec,
): void {
  scope(() => {
    const hkv = k.shape[2];
    const { qg, kh, vh, probs } = attentionWeights(q, k, v, spec);
    const g = toGroups(grad, hkv); // [B, Hkv, g*T, hd]
    const ds = softmaxGrad(probs, matmul(g, vh, { transB: true })); // [B, Hkv, g*T, S]
    assign(dq, dq.add(fromGroups(matmul(ds, kh).mul(spec.scale), q.shape, hkv))); // [B, T, H, hd]
    assign(dk, dk.add(permute(matmul(ds, qg, { transA: true }), [0, 2, 1, 3]))); // [B, Hkv, S, hd] -> [B, S, Hkv, hd]
    assign(dv, dv.add(permute(matmul(probs, g, { transA: true }), [0, 2, 1, 3]))); // [B, Hkv, S, hd] -> [B, S, Hkv, hd]
  });
}

/**
 * The backward pass of `attention`: for q [B, T, H, hd], k and v [B, S, Hkv, hd] and the gradient of the output
 * (shaped like q), the gradients of q, k and v added to dq (shaped like q), dk and dv (like k); kernel:
 * `attentionGrad(q, k, v, grad, dq, dk, dv, spec)`. One op so that a backend computes the weights once for all three
 * and never holds the [B, H, T, S] scores (the CPU kernel recomputes each query's weights from q and k), adding
 * each gradient where the caller keeps it (a packed result was cut into three copies; written over, they would be
 * zeroed twice). Not differentiated (the second derivative of attention goes through `attention`'s composite).
 */
export const attentionGradOp = inPlaceOp({
  name: 'attentionGrad',
  inputs: ['q', 'k', 'v', 'grad', 'dq', 'dk', 'dv'],
  composite: attendGrad,
  gradient: 'none',
  cases: attentionCases(true),
});

/** Attention's three input gradients. */
export interface AttentionGrads {
  readonly dq: Tensor;
  readonly dk: Tensor;
  readonly dv: Tensor;
}

/**
 * dq, dk and dv of attention with `spec` for the gradient `grad` of its output: zeros shaped like q, k and v, which
 * `attentionGradOp` adds to (attention's backward rule, and `attentionGrad` once it has checked its inputs).
 */
export function attentionGradsOf(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  grad: Tensor,
  spec: AttentionSpec,
): AttentionGrads {
  const backend = { backend: q.backend };
  const grads = { dq: zeros(q.shape, backend), dk: zeros(k.shape, backend), dv: zeros(v.shape, backend) };
  runFusedInPlace(attentionGradOp, [q, k, v, grad, grads.dq, grads.dk, grads.dv], [spec]);
  return grads;
}

/**
 * The gradients of `attention(q, k, v, options)` for the gradient `grad` of its output: dq shaped like q, dk and dv
 * like k.
 */
export function attentionGrad(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  grad: Tensor,
  options: AttentionOptions = {},
): AttentionGrads {
  const spec = attentionSpec('attentionGrad', q, k, v, options);
  if (!shapesEqual(grad.shape, q.shape) || grad.dtype !== 'f32' || grad.backend !== q.backend) {
    throw new Error(
      `attentionGrad: expected grad, the gradient of attention's output, as an f32 tensor shaped like q ${showShape(q.shape)} on q's backend; got ${grad.dtype} ${showShape(grad.shape)}`,
    );
  }
  return attentionGradsOf(q, k, v, grad, spec);
}
