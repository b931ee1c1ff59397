import { arange, concat, scope, softmax, type Tensor, where } from '@loom/tensor';
import { Linear } from '../layers/linear';
import { Module } from '../module';

/** What the router decides for N tokens. */
export interface Routing {
  /** Softmax over all E router logits, [N, E]: the P of the load-balancing loss. */
  readonly probs: Tensor;
  /** The chosen experts as one-hot rows, f32 [N, k, E], best first. */
  readonly choices: Tensor;
  /** Gate of each choice, [N, k]: a softmax over the k chosen logits (Mixtral), so each row sums to 1. */
  readonly gates: Tensor;
}

/**
 * Top-k router: a linear map dim → E without bias (`gate`, Mixtral's `block_sparse_moe.gate`), the k largest logits
 * per token (ties go to the lower expert index), and gates from a softmax over those k logits only, as Mixtral
 * does (the same as renormalising the full softmax over the chosen experts). Gradients reach the router through
 * the gates and through `probs`; the choice itself is discrete.
 */
export class TopKRouter extends Module {
  readonly gate: Linear;

  constructor(
    dim: number,
    readonly experts: number,
    readonly topK: number,
    init: { std: number; seed: number },
  ) {
    super();
    this.gate = this.addChild(
      'gate',
      new Linear(dim, experts, { bias: false, std: init.std, seed: init.seed }),
    );
  }

  /** x [N, dim] -> the routing of each row. */
  route(x: Tensor): Routing {
    return scope(() => {
      const logits = this.gate.forward(x); // [N, E]
      const [n, e] = logits.shape;
      const expertIds = arange(e, 0, 1, { backend: logits.backend, dtype: 'i32' }); // [E]
      let remaining = logits;
      const picks: Tensor[] = [];
      const chosen: Tensor[] = [];
      for (let j = 0; j < this.topK; j++) {
        const best = remaining.argmax(-1, true); // [N, 1] i32
        const isBest = expertIds.eq(best); // [N, E] i32
        const oneHot = isBest.cast('f32'); // [N, E]
        chosen.push(oneHot.reshape([n, 1, e]));
        picks.push(logits.mul(oneHot).sum(-1, true)); // [N, 1]
        remaining = where(isBest, -Infinity, remaining);
      }
      return {
        probs: softmax(logits),
        choices: concat(chosen, 1), // [N, k, E]
        gates: softmax(concat(picks, 1)), // [N, k]
      };
    });
  }
}
