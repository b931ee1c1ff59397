import type { TransformerLM } from '@loom/nn';
import type { Tokenizer } from '@loom/tokenizer';
import { ChatSession, type ChatSessionOptions } from './chat-session';
import { encodePrompt } from './default-stops';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent } from './generation-event';
import { InferenceSession, type InferenceSessionOptions } from './inference-session';
import { startGeneration } from './run-generation';

/** Throws unless the tokenizer's ids are exactly the model's vocabulary. */
function checkTokenizer(model: TransformerLM, tokenizer: Tokenizer): void {
  const { vocabSize } = model.config;
  if (tokenizer.vocabSize !== vocabSize) {
    throw new Error(
      `TextGenerator: the tokenizer has ${tokenizer.vocabSize} tokens but the model's vocabulary has ${vocabSize} ` +
        '(vocabSize); use the tokenizer the model was trained with',
    );
  }
}

/**
 * A model and its tokenizer, ready to generate text: `generate` streams the tokens of one prompt, `chat` starts a
 * conversation that keeps its cache between turns, `session` gives the low-level prefill/decode loop.
 */
export class TextGenerator {
  constructor(
    readonly model: TransformerLM,
    readonly tokenizer: Tokenizer,
  ) {
    checkTokenizer(model, tokenizer);
  }

  /** The ids of a text prompt, BOS first for llama2.c tokenizers (as llama2.c's run.c encodes). */
  encode(text: string): number[] {
    return encodePrompt(this.tokenizer, text);
  }

  /** An empty sequence with its own cache; dispose it when done. */
  session(options: InferenceSessionOptions = {}): InferenceSession {
    return new InferenceSession(this.model, options);
  }

  /**
   * Streams the generation after `prompt` (text, or token ids used as they are). Throws at once when the prompt is
   * empty or longer than the context, or a setting is invalid. The cache lives as long as the iteration; breaking out of it frees the cache.
   */
  generate(
    prompt: string | readonly number[],
    options: GenerateOptions = {},
  ): AsyncGenerator<GenerationEvent, void> {
    const ids = typeof prompt === 'string' ? this.encode(prompt) : [...prompt];
    const session = this.session();
    try {
      return disposeAfter(session, startGeneration(session, this.tokenizer, ids, 0, options));
    } catch (error) {
      session.dispose();
      throw error;
    }
  }

  /** A conversation whose turns reuse the cache of the earlier ones; dispose it when done. */
  chat(options: ChatSessionOptions = {}): ChatSession {
    return new ChatSession(this, options);
  }
}

async function* disposeAfter(
  session: InferenceSession,
  events: AsyncGenerator<GenerationEvent, void>,
): AsyncGenerator<GenerationEvent, void> {
  try {
    yield* events;
  } finally {
    session.dispose();
  }
}
