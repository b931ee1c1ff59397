import type { Tensor } from '@loom/tensor';

/**
 * One sequence being decoded, as the generation loop drives it: an `InferenceSession` (a
 * transformer and its KV cache) or a `RecurrentSession` (a recurrent model and its state).
 */
export interface DecodingSession {
  /** The token ids fed so far, in order. */
  readonly tokens: readonly number[];
  /** Positions the session holds in all. */
  readonly capacity: number;
  /** Positions still free. */
  readonly remaining: number;
  /** The most positions the model itself takes (its maxSeqLen), for error messages. */
  readonly maxSeqLen: number;
  /** Appends tokens and returns the logits [vocab] predicting the next one; dispose them when read. */
  feed(tokens: readonly number[]): Tensor;
  /** Forgets every token from position `length` on. */
  truncate(length: number): void;
}
