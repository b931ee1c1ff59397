import { concat, scatterAdd, scope, type Tensor } from '@loom/tensor';
import type { TransformerConfig } from '../config';
import { SwiGLUFeedForward } from '../layers/feed-forward';
import { Module } from '../module';
import { loadBalancingLoss } from './aux-loss';
import { expertCapacity, type MoeConfig } from './config';
import { dispatch } from './dispatch';
import { TopKRouter } from './router';

/** What training and reports need from one call of a MoE feed-forward. */
export interface MoeStats {
  /** The load-balancing loss of this call, a scalar (see `loadBalancingLoss`). */
  readonly auxLoss: Tensor;
  /** Assignments per expert in this call, [E] (counts as f32). */
  readonly load: Tensor;
  /** Assignments dropped because their expert was full, a scalar count. */
  readonly dropped: Tensor;
}

/** The output of a MoE feed-forward and its stats. */
export interface MoeForward extends MoeStats {
  /** [..., dim], the shape of the input. */
  readonly output: Tensor;
}

interface MoeInit {
  readonly std: number;
  readonly residualStd: number;
  readonly seeds: () => number;
  readonly dropout: number;
}

/** Holds the experts under the names experts.0, experts.1, ... */
class ExpertList extends Module {
  readonly items: SwiGLUFeedForward[];

  constructor(count: number, make: () => SwiGLUFeedForward) {
    super();
    this.items = Array.from({ length: count }, (_, i) => this.addChild(String(i), make()));
  }
}

/**
 * Sparse mixture-of-experts feed-forward (Mixtral's `block_sparse_moe`): a top-k router (`gate`) and E SwiGLU
 * experts (`experts.e.w1/w2/w3`). Tokens are grouped per expert (gather the rows routed to e, one batched product
 * per expert of C rows, C = `expertCapacity`), and each result is scatter-added back weighted by its gate, so an
 * expert computes C rows rather than every token.
 */
export class MoeFeedForward extends Module {
  readonly router: TopKRouter;
  readonly experts: SwiGLUFeedForward[];

  constructor(
    config: TransformerConfig,
    readonly moe: MoeConfig,
    init: MoeInit,
  ) {
    super();
    this.router = new TopKRouter(config.dim, moe.experts, moe.topK, { std: init.std, seed: init.seeds() });
    this.addChild('gate', this.router.gate);
    this.experts = this.addChild(
      'experts',
      new ExpertList(moe.experts, () => new SwiGLUFeedForward(config, init)),
    ).items;
  }

  /** x [..., dim] -> [..., dim]. */
  forward(x: Tensor): Tensor {
    return scope(() => this.route(x).output);
  }

  /** x [..., dim] -> the output with the load-balancing loss and the load of this call. */
  route(x: Tensor): MoeForward {
    return scope(() => {
      const dim = x.shape[x.rank - 1];
      const rows = x.reshape([-1, dim]); // [N, dim]
      const n = rows.shape[0];
      const routing = this.router.route(rows);
      const capacity = expertCapacity(this.moe, n);
      const { slotTokens, slotGates, load, dropped } = dispatch(routing.choices, routing.gates, capacity);
      const grouped = rows.gather(slotTokens); // [E·C, dim], zeros on empty rows
      const outputs = this.experts.map((expert, e) =>
        expert.forward(grouped.slice([e * capacity, 0], [capacity, dim])),
      ); // E × [C, dim]
      const weighted = concat(outputs, 0).mul(slotGates); // [E·C, dim]
      const output = scatterAdd(weighted, slotTokens, n).reshape(x.shape); // [..., dim]
      return { output, auxLoss: loadBalancingLoss(routing.probs, load, this.moe.topK), load, dropped };
    });
  }
}
