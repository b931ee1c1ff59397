/** A tokenizer.json `model`: turns one pre-tokenized piece into ids. */
export interface HfModel {
  /** Token text to id, for every entry of the model's vocabulary. */
  readonly vocab: ReadonlyMap<string, number>;
  /** Appends the ids of `piece`. */
  tokenize(piece: string, out: number[]): void;
}

/** Pieces cached by a model before its cache is emptied and refilled. */
export const PIECE_CACHE_LIMIT = 1 << 16;
