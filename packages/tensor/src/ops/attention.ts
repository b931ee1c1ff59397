import { matmul } from '../matmul';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { attentionCases } from './attention-cases';
import { attentionGradsOf } from './attention-grad';
import type { AttentionSpec } from './attention-mask';
import { type AttentionOptions, attentionSpec } from './attention-options';
import { attentionWeights, fromGroups } from './attention-weights';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** q [B, T, H, hd], k and v [B, S, Hkv, hd] -> [B, T, H, hd]: the weights' composite, then P v by kv head. */
function attend(q: Tensor, k: Tensor, v: Tensor, spec: AttentionSpec): Tensor {
  return scope(() => {
    const { vh, probs } = attentionWeights(q, k, v, spec);
    return fromGroups(matmul(probs, vh), q.shape, k.shape[2]); // [B, Hkv, g*T, hd] -> [B, T, H, hd]
  });
}

/**
 * Scaled dot-product attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] with Hkv
 * dividing H; result [B, T, H, hd]; kernel: `attention(q, k, v, spec)`. While recording, the
 * kernel runs and its rule takes all three gradients from one `attentionGrad` (the fused backward:
 * no score tensors through primitives where a backend has its kernel).
 */
export const attentionOp = fusedOp({
  name: 'attention',
  inputs: ['q', 'k', 'v'],
  outputShape: ([q]) => q.shape,
  composite: attend,
  gradient: {
    backward: ({ inputs: [q, k, v], params: [spec], grad, needs }) =>
      scope(() => {
        const { dq, dk, dv } = attentionGradsOf(q, k, v, grad, spec);
        return [dq, dk, dv].map((g, i) => (needs[i] ? g : undefined));
      }),
  },
  cases: attentionCases(false),
});

/**
 * Scaled dot-product attention. q [B, T, H, hd], k and v [B, S, Hkv, hd] where Hkv divides H
 * (grouped-query heads: query head h reads kv head floor(h * Hkv / H)). Result [B, T, H, hd].
 * The query t (at position offset + t) of batch row b sees the keys the mask allows, limited to the
 * last `window` positions and to the row's `keyLengths[b]` valid keys; a query that sees no key gets 0.
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor {
  return runFused(attentionOp, [q, k, v], [attentionSpec('attention', q, k, v, options)]);
}
