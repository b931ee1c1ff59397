import { maskTokens, type SpecialTokens } from '@loom/nn';
import { type Batch, drawBatch } from '../batches';
import { keyedSeed, type StreamName } from '../random';

/** Where masked-token batches come from: a split's tokens, the model's special ids and the batch size. */
export interface MlmSource {
  readonly tokens: Int32Array;
  readonly special: SpecialTokens;
  /** The tokenizer's ids are [0, baseVocab): random replacements come from there. */
  readonly baseVocab: number;
  readonly seed: number;
  readonly rows: number;
  readonly block: number;
}

/**
 * Batch `index` of a stream for masked-token training: the same windows a decoder would see (drawBatch), then
 * BERT's corruption (15% selected: 80% [MASK], 10% random, 10% kept) seeded by (seed, stream, index) alone, so a
 * resumed run and every evaluation see the same masks.
 */
export function mlmBatch(source: MlmSource, stream: StreamName, index: number): Batch {
  const { tokens, special, seed, rows, block } = source;
  const window = drawBatch(tokens, seed, stream, index, rows, block);
  const masked = maskTokens(window.inputs, {
    maskId: special.mask,
    randomBelow: source.baseVocab,
    special: [special.pad, special.cls, special.mask],
    seed: keyedSeed(keyedSeed(seed, stream, index), 'masking', 0),
  });
  return { rows, block, inputs: masked.inputs, targets: masked.targets };
}
