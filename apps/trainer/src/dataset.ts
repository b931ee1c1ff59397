import { CharTokenizer, type Tokenizer, trainBpe } from '@loom/tokenizer';
import { type Corpus, splitCorpus } from './corpus';
import type { TokenizerChoice } from './options';

/** The token ids of both splits and the tokenizer that made them. */
export interface Dataset {
  readonly tokenizer: Tokenizer;
  readonly train: Int32Array;
  readonly val: Int32Array;
}

export interface TokenizerRequest {
  readonly kind: TokenizerChoice;
  /** BPE vocabulary size. */
  readonly vocabSize: number;
  /** Told when a BPE is being trained (it takes a moment on large texts). */
  readonly onBpe?: (message: string) => void;
}

/**
 * A new tokenizer for a corpus: characters of the whole text (as nanoGPT's character setup
 * does, so the validation split has no unknown characters), or a byte-level BPE trained on the
 * training split only.
 */
export function buildTokenizer(corpus: Corpus, request: TokenizerRequest): Tokenizer {
  if (request.kind === 'char') return CharTokenizer.fromCorpus(corpus.text);
  const { train } = splitCorpus(corpus.text);
  request.onBpe?.(`training a byte-level BPE of ${request.vocabSize} tokens on ${train.length} characters`);
  return trainBpe(train, { vocabSize: request.vocabSize });
}

/** Encodes both splits; each must hold at least one sequence of `block` + 1 tokens. */
export function encodeDataset(corpus: Corpus, tokenizer: Tokenizer, block: number): Dataset {
  const split = splitCorpus(corpus.text);
  const dataset = {
    tokenizer,
    train: Int32Array.from(tokenizer.encode(split.train)),
    val: Int32Array.from(tokenizer.encode(split.val)),
  };
  for (const [name, ids] of [
    ['training', dataset.train],
    ['validation', dataset.val],
  ] as const) {
    if (ids.length < block + 1) {
      throw new Error(
        `${corpus.source}: the ${name} split holds ${ids.length} tokens, but one sequence needs --block + 1 = ${block + 1}; ` +
          'use a longer text or a smaller --block',
      );
    }
  }
  return dataset;
}
