import type { Tensor } from '@loom/tensor';

/**
 * The load-balancing loss of Switch Transformer and Mixtral, E · Σ_e f_e · P_e: f_e is the share of the N·k
 * assignments that chose expert e (`load` [E] / (N·k), no gradient) and P_e the mean router probability of e
 * (`probs` [N, E]). It is 1 when the load and the probabilities are uniform and grows as they concentrate.
 */
export function loadBalancingLoss(probs: Tensor, load: Tensor, topK: number): Tensor {
  const [n, e] = probs.shape;
  return load
    .div(n * topK)
    .mul(probs.mean(0))
    .sum()
    .mul(e);
}
