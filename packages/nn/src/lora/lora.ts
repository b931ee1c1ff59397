import type { Tensor } from '@loom/tensor';
import { SeedSequence } from '../init';
import type { TransformerLM } from '../transformer';
import { LoraAdapter } from './adapter';
import { defaultLoraTargets, type LoraTarget, loraSites } from './targets';

/** How `applyLora` adapts a model. */
export interface LoraOptions {
  /** Rank r of each adapter. */
  readonly rank: number;
  /** Scale numerator: updates are scaled by alpha / r (default: r, a scale of 1). */
  readonly alpha?: number;
  /** Dropout on each adapter's input while training (default 0). */
  readonly dropout?: number;
  /** PEFT module names to adapt (default: q_proj, v_proj for llama; c_attn for gpt2). */
  readonly targets?: readonly string[];
  /** Seed of the A initialisations and dropout masks (default 0). */
  readonly seed?: number;
}

/** The resolved settings of a LoRA. */
export interface LoraSettings {
  readonly rank: number;
  readonly alpha: number;
  readonly dropout: number;
  readonly targets: readonly LoraTarget[];
}

function checkSettings(model: TransformerLM, options: LoraOptions): LoraSettings {
  const { rank } = options;
  const alpha = options.alpha ?? rank;
  const dropout = options.dropout ?? 0;
  const problems: string[] = [];
  if (!Number.isInteger(rank) || rank < 1) problems.push(`rank must be a positive integer, got ${rank}`);
  if (!(Number.isFinite(alpha) && alpha > 0)) problems.push(`alpha must be a positive number, got ${alpha}`);
  if (!(dropout >= 0 && dropout < 1)) problems.push(`dropout must be in [0, 1), got ${dropout}`);
  if (problems.length > 0) throw new Error(`applyLora: ${problems.join('; ')}`);
  const targets = [...(options.targets ?? defaultLoraTargets(model.config.preset))] as LoraTarget[];
  return { rank, alpha, dropout, targets };
}

/**
 * LoRA adapters on a model's chosen linear layers. The base weights stay as they are: train with
 * `parameters()` (the adapters' A and B only), so no gradient is computed and no optimizer state is kept for the
 * base. `merge()` folds every update into the weights, `unmerge()` takes it out again.
 */
export class Lora {
  readonly adapters: readonly LoraAdapter[];
  readonly settings: LoraSettings;

  constructor(
    readonly model: TransformerLM,
    options: LoraOptions,
  ) {
    this.settings = checkSettings(model, options);
    const sites = loraSites(model, this.settings.targets);
    if (sites.some((s) => s.linears.some((l) => l.adapter !== undefined))) {
      throw new Error('applyLora: the model already has adapters on these layers; dispose them first');
    }
    const seeds = new SeedSequence(options.seed ?? 0);
    const adapters: LoraAdapter[] = [];
    try {
      for (const site of sites) {
        const { rank, alpha, dropout } = this.settings;
        for (const linear of site.linears) {
          if (rank > Math.min(linear.inFeatures, linear.outFeatures)) {
            throw new Error(
              `applyLora: rank ${rank} exceeds ${site.path}'s smaller side (${linear.inFeatures} in, ${linear.outFeatures} out); use a rank of at most ${Math.min(linear.inFeatures, linear.outFeatures)}`,
            );
          }
        }
        adapters.push(new LoraAdapter(site, { rank, alpha, dropout, seed: seeds.next() }));
      }
    } catch (error) {
      for (const a of adapters) a.dispose();
      throw error;
    }
    this.adapters = adapters;
  }

  /** The trainable tensors, adapter by adapter (A, then B's blocks). */
  parameters(): Tensor[] {
    return this.adapters.flatMap((a) => a.parameters());
  }

  /** Number of trainable values. */
  get trainableCount(): number {
    return this.parameters().reduce((n, p) => n + p.size, 0);
  }

  get merged(): boolean {
    return this.adapters.some((a) => a.merged);
  }

  /** Folds every adapter into its weights (see `LoraAdapter.merge`). */
  merge(): void {
    for (const a of this.adapters) a.merge();
  }

  /** Takes every merged update back out of the weights. */
  unmerge(): void {
    for (const a of this.adapters) a.unmerge();
  }

  /** Detaches and frees the adapters; merged updates stay in the weights. */
  dispose(): void {
    for (const a of this.adapters) a.dispose();
  }
}

/** Adds LoRA adapters to `model` (see `Lora`). */
export function applyLora(model: TransformerLM, options: LoraOptions): Lora {
  return new Lora(model, options);
}
