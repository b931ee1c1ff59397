import { matmul } from '../matmul';
import { concat, permute } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape, sizeOf } from '../shape';
import type { Tensor } from '../tensor';
import { attentionCases } from './attention-cases';
import type { AttentionSpec } from './attention-mask';
import { type AttentionOptions, attentionSpec } from './attention-options';
import { attentionWeights, fromGroups, toGroups } from './attention-weights';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { softmaxGrad } from './softmax-grad';

/**
 * The gradients of attention's q, k and v for the gradient g of its output, by kv head: P and the scaled q from
 * the forward's composite, dP = g vᵀ, dS = softmaxGrad(P, dP), dq = scale dS k, dk = dSᵀ (scale q), dv = Pᵀ g
 * (the sums over a kv head's query heads fall out of the products). Flattened as `attentionGrad` returns them.
 */
function attendGrad(q: Tensor, k: Tensor, v: Tensor, grad: Tensor, spec: AttentionSpec): Tensor {
  return scope(() => {
    const hkv = k.shape[2];
    const { qg, kh, vh, probs } = attentionWeights(q, k, v, spec);
    const g = toGroups(grad, hkv); // [B, Hkv, g*T, hd]
    const ds = softmaxGrad(probs, matmul(g, vh, { transB: true })); // [B, Hkv, g*T, S]
    const dq = fromGroups(matmul(ds, kh).mul(spec.scale), q.shape, hkv); // [B, T, H, hd]
    const dk = permute(matmul(ds, qg, { transA: true }), [0, 2, 1, 3]); // [B, Hkv, S, hd] -> [B, S, Hkv, hd]
    const dv = permute(matmul(probs, g, { transA: true }), [0, 2, 1, 3]); // [B, Hkv, S, hd] -> [B, S, Hkv, hd]
    return concat([dq, dk, dv].map((x) => x.reshape([sizeOf(x.shape)])));
  });
}

/**
 * The backward pass of `attention`: for q [B, T, H, hd], k and v [B, S, Hkv, hd] and the gradient of the output
 * (shaped like q), the gradients of q, k and v flattened one after another into one vector
 * [B·T·H·hd + 2·B·S·Hkv·hd]; kernel: `attentionGrad(q, k, v, grad, spec)`. One op so that a backend computes the
 * weights once for all three and never holds the [B, H, T, S] scores (the CPU kernel recomputes each query's
 * weights from q and k). Differentiated, where ever needed, through its composite.
 */
export const attentionGradOp = fusedOp({
  name: 'attentionGrad',
  inputs: ['q', 'k', 'v', 'grad'],
  outputShape: ([q, k]) => [sizeOf(q.shape) + 2 * sizeOf(k.shape)],
  composite: attendGrad,
  gradient: 'through-composite',
  cases: attentionCases(true),
});

/**
 * The gradients of `attention(q, k, v, options)` for the gradient `grad` of its output, flattened: dq
 * (q's size), then dk and dv (k's size each). Autograd calls it through attention's rule.
 */
export function attentionGrad(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  grad: Tensor,
  options: AttentionOptions = {},
): Tensor {
  const spec = attentionSpec('attentionGrad', q, k, v, options);
  if (!shapesEqual(grad.shape, q.shape) || grad.dtype !== 'f32' || grad.backend !== q.backend) {
    throw new Error(
      `attentionGrad: expected grad, the gradient of attention's output, as an f32 tensor shaped like q ${showShape(q.shape)} on q's backend; got ${grad.dtype} ${showShape(grad.shape)}`,
    );
  }
  return runFused(attentionGradOp, [q, k, v, grad], [spec]);
}
