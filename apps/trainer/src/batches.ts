import { keyedSeed, randomInt, type StreamName } from './random';

/**
 * Inputs and targets of `rows` sequences, row-major [rows, block]: next tokens for a decoder, the original ids
 * at masked positions (-100 elsewhere) for masked-token training. A classification batch also has one label per
 * row and the real (unpadded) length of each row.
 */
export interface Batch {
  readonly rows: number;
  readonly block: number;
  readonly inputs: Int32Array;
  readonly targets: Int32Array;
  /** [rows] class of each row (classification). */
  readonly labels?: Int32Array;
  /** [rows] tokens of each row before its right padding; absent: no padding. */
  readonly lengths?: readonly number[];
}

/** Sequences of `block` + 1 tokens cut from `tokens` at `starts`: inputs are the first `block`, targets the last. */
export function cutBatch(tokens: Int32Array, starts: readonly number[], block: number): Batch {
  const inputs = new Int32Array(starts.length * block);
  const targets = new Int32Array(starts.length * block);
  starts.forEach((start, row) => {
    if (start < 0 || start + block + 1 > tokens.length) {
      throw new Error(`cutBatch: start ${start} leaves no room for ${block + 1} tokens in ${tokens.length}`);
    }
    inputs.set(tokens.subarray(start, start + block), row * block);
    targets.set(tokens.subarray(start + 1, start + block + 1), row * block);
  });
  return { rows: starts.length, block, inputs, targets };
}

/**
 * Batch `index` of a stream: `rows` random sequence starts drawn from a seed keyed on (seed,
 * stream, index) alone, so the data order depends on nothing else and a resumed run sees
 * the same batches.
 */
export function drawBatch(
  tokens: Int32Array,
  seed: number,
  stream: StreamName,
  index: number,
  rows: number,
  block: number,
): Batch {
  const key = keyedSeed(seed, stream, index);
  const choices = tokens.length - block;
  const starts = Array.from({ length: rows }, (_, row) => randomInt(key, row, choices));
  return cutBatch(tokens, starts, block);
}

/** The micro-batches of training step `step` (0-based). */
export function trainBatches(
  tokens: Int32Array,
  seed: number,
  step: number,
  microBatches: number,
  rows: number,
  block: number,
): Batch[] {
  return Array.from({ length: microBatches }, (_, micro) =>
    drawBatch(tokens, seed, 'trainBatches', step * microBatches + micro, rows, block),
  );
}
