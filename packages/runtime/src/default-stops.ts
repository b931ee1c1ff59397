import type { Tokenizer } from '@loom/tokenizer';

/**
 * The tokens that end a generation unless the caller says otherwise: EOS, and for llama2.c tokenizers BOS too —
 * llama2.c's run.c stops when the model emits BOS, which TinyStories models put between stories.
 */
export function defaultEosTokens(tokenizer: Tokenizer): number[] {
  const ids = tokenizer.kind === 'llama2c' ? [tokenizer.bos, tokenizer.eos] : [tokenizer.eos];
  return ids.filter((id): id is number => id !== undefined);
}

/** A prompt's ids as llama2.c's run.c makes them: BOS first for llama2.c tokenizers, the text as is otherwise. */
export function encodePrompt(tokenizer: Tokenizer, text: string): number[] {
  return tokenizer.encode(text, { bos: tokenizer.kind === 'llama2c' });
}
