import { assign, keep, matmul, rand, scope, type Tensor, zeros } from '@loom/tensor';
import { Dropout } from '../layers/dropout';
import type { Linear, LinearAdapter } from '../layers/linear';
import type { LoraSite } from './targets';

/** Rank, scale and dropout of one adapter. */
export interface LoraAdapterOptions {
  readonly rank: number;
  /** The update is scaled by alpha / rank. */
  readonly alpha: number;
  /** Dropout on the adapter's input while training. */
  readonly dropout: number;
  /** Seed of A's initialisation and of the dropout masks. */
  readonly seed: number;
}

/**
 * A LoRA adapter on one PEFT module: ΔW = (alpha/r)·B·A with A [r, in] and B [out, r]. A starts as PEFT's
 * Kaiming-uniform (a = √5, i.e. uniform in ±1/√in) and B at zero, so the adapted model starts equal to the base.
 * A module that Loom splits into several linears (GPT-2's c_attn) shares A; B is kept as one block of rows per
 * linear (`b[k]` [out_k, r]), which stacked are PEFT's lora_B.
 */
export class LoraAdapter {
  /** [r, in] */
  readonly a: Tensor;
  /** One [out_k, r] per linear of the site. */
  readonly b: readonly Tensor[];
  readonly scale: number;
  readonly #dropout: Dropout;
  #merged = false;

  constructor(
    readonly site: LoraSite,
    readonly options: LoraAdapterOptions,
  ) {
    const first = site.linears[0];
    if (!first) throw new Error(`LoraAdapter: ${site.path} has no linear layer`);
    const { rank } = options;
    const inFeatures = first.inFeatures;
    const backend = first.backend;
    const bound = 1 / Math.sqrt(inFeatures);
    this.a = keep(
      scope(() =>
        rand([rank, inFeatures], { seed: options.seed, backend })
          .mul(2 * bound)
          .sub(bound),
      ),
    );
    this.b = site.linears.map((l) => keep(zeros([l.outFeatures, rank], { backend })));
    this.scale = options.alpha / rank;
    this.#dropout = new Dropout(options.dropout, (options.seed ^ 0x5bd1e995) >>> 0);
    this.#attach();
  }

  /** Trainable tensors: A, then each block of B. */
  parameters(): Tensor[] {
    return [this.a, ...this.b];
  }

  get merged(): boolean {
    return this.#merged;
  }

  #attach(): void {
    this.site.linears.forEach((linear, k) => {
      linear.adapter = this.#hook(linear, k);
    });
  }

  #detach(): void {
    for (const linear of this.site.linears) linear.adapter = undefined;
  }

  #hook(linear: Linear, k: number): LinearAdapter {
    return {
      delta: (x: Tensor) =>
        scope(() => {
          this.#dropout.train(linear.training);
          const h = matmul(this.#dropout.forward(x), this.a, { transB: true }); // [..., r]
          return matmul(h, this.b[k], { transB: true }).mul(this.scale); // [..., out_k]
        }),
    };
  }

  /** W += (alpha/r)·B·A into each linear, and stops adding the adapter in forward (inference with no overhead). */
  merge(): void {
    if (this.#merged) throw new Error(`LoraAdapter.merge: ${this.site.path} is already merged`);
    this.#shiftWeights(1);
    this.#detach();
    this.#merged = true;
  }

  /** The inverse of `merge`: W -= (alpha/r)·B·A and the adapter is applied in forward again. */
  unmerge(): void {
    if (!this.#merged) throw new Error(`LoraAdapter.unmerge: ${this.site.path} is not merged`);
    this.#shiftWeights(-1);
    this.#attach();
    this.#merged = false;
  }

  #shiftWeights(sign: 1 | -1): void {
    this.site.linears.forEach((linear, k) => {
      const updated = scope(
        () => linear.weight.add(matmul(this.b[k], this.a).mul(sign * this.scale)), // [out_k, in]
      );
      assign(linear.weight, updated);
      updated.dispose();
    });
  }

  /** Removes the adapter from its linears (the weights keep a merged update) and frees A and B. */
  dispose(): void {
    this.#detach();
    for (const t of this.parameters()) t.dispose();
  }
}
