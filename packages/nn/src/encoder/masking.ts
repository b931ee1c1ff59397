import { uniformAt } from '@loom/tensor';

/** How `maskTokens` corrupts a batch for masked-language-model training (BERT's recipe by default). */
export interface MaskingOptions {
  /** Id written at most selected positions. */
  readonly maskId: number;
  /** Random replacements are drawn uniformly from the ids [0, randomBelow) (the tokenizer's own ids). */
  readonly randomBelow: number;
  /** Ids that are never selected (padding, [CLS], [MASK]). */
  readonly special: readonly number[];
  /** Seed of every draw: the same seed and ids give the same result. */
  readonly seed: number;
  /** Share of the other tokens selected for prediction (default 0.15). */
  readonly rate?: number;
  /** Of the selected: share replaced by maskId (default 0.8) and by a random id (default 0.1); the rest stay. */
  readonly maskShare?: number;
  readonly randomShare?: number;
  /** Target of the positions that are not selected (default -100, the loss's ignore index). */
  readonly ignoreIndex?: number;
}

/** A corrupted batch: `inputs` to feed the model, `targets` holding the original id at selected positions only. */
export interface MaskedBatch {
  readonly inputs: Int32Array;
  readonly targets: Int32Array;
  /** Positions selected for prediction. */
  readonly selected: number;
}

function checkShare(name: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new Error(`maskTokens: ${name} must be in [0, 1], got ${value}`);
}

/**
 * Masked-language-model corruption of `ids` (any layout; each position independently): every non-special token
 * is selected with probability `rate`; a selected one becomes maskId (80%), a random id (10%) or stays (10%),
 * and only selected positions get a target. Position i uses the draws 3i, 3i+1 and 3i+2 of `seed`.
 */
export function maskTokens(ids: Int32Array, options: MaskingOptions): MaskedBatch {
  const rate = options.rate ?? 0.15;
  const maskShare = options.maskShare ?? 0.8;
  const randomShare = options.randomShare ?? 0.1;
  for (const [name, value] of [
    ['rate', rate],
    ['maskShare', maskShare],
    ['randomShare', randomShare],
  ] as const)
    checkShare(name, value);
  if (maskShare + randomShare > 1) {
    throw new Error(`maskTokens: maskShare + randomShare must be at most 1, got ${maskShare + randomShare}`);
  }
  if (!Number.isInteger(options.randomBelow) || options.randomBelow < 1) {
    throw new Error(`maskTokens: randomBelow must be an integer >= 1, got ${options.randomBelow}`);
  }
  const special = new Set(options.special);
  const ignoreIndex = options.ignoreIndex ?? -100;
  const inputs = Int32Array.from(ids);
  const targets = new Int32Array(ids.length).fill(ignoreIndex);
  let selected = 0;
  for (let i = 0; i < ids.length; i++) {
    if (special.has(ids[i]) || uniformAt(options.seed, 3 * i) >= rate) continue;
    selected++;
    targets[i] = ids[i];
    const kind = uniformAt(options.seed, 3 * i + 1);
    if (kind < maskShare) inputs[i] = options.maskId;
    else if (kind < maskShare + randomShare) {
      inputs[i] = Math.floor(uniformAt(options.seed, 3 * i + 2) * options.randomBelow);
    }
  }
  return { inputs, targets, selected };
}
