/** The ids an encoder adds after a tokenizer's vocabulary: padding, the [CLS] summary token and [MASK]. */
export interface SpecialTokens {
  readonly pad: number;
  readonly cls: number;
  readonly mask: number;
}

/** How many ids `specialTokensAfter` adds. */
export const SPECIAL_TOKEN_COUNT = 3;

/**
 * Special tokens numbered right after a tokenizer's `baseVocab` ids (pad = baseVocab, cls = baseVocab + 1,
 * mask = baseVocab + 2), so the model's vocabulary is `baseVocab + SPECIAL_TOKEN_COUNT`.
 */
export function specialTokensAfter(baseVocab: number): SpecialTokens {
  if (!Number.isInteger(baseVocab) || baseVocab < 1) {
    throw new Error(
      `specialTokensAfter: expected the tokenizer's vocabulary size (an integer >= 1), got ${baseVocab}`,
    );
  }
  return { pad: baseVocab, cls: baseVocab + 1, mask: baseVocab + 2 };
}
