import type { Backend, Tensor } from '@loom/tensor';

/** A recurrent model's generation state: a fixed number of bytes however many tokens it has seen. */
export interface RecurrentState {
  /** Bytes the state holds. */
  readonly bytes: number;
  /** Back to the start of a sequence. */
  reset(): void;
  dispose(): void;
}

/**
 * What the runtime needs to generate from a recurrent model (a MambaLM is one): a state, a
 * prefill that runs a prompt through it and a step that runs one token, each returning the
 * logits [batch, vocab] after the last token and updating the state in place.
 */
export interface RecurrentModel<S extends RecurrentState> {
  readonly backend: Backend;
  readonly vocabSize: number;
  newState(batch?: number): S;
  /** tokens i32 [batch, T] -> logits [batch, vocab] after the last of them. */
  prefill(tokens: Tensor, state: S): Tensor;
  /** tokens i32 [batch, 1] -> logits [batch, vocab]. */
  step(tokens: Tensor, state: S): Tensor;
}
