import type { Tokenizer } from '@loom/tokenizer';
import { encodePrompt } from './default-stops';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent } from './generation-event';
import { OwningStream } from './owning-stream';
import type { RecurrentModel, RecurrentState } from './recurrent-model';
import { RecurrentSession } from './recurrent-session';
import { startGeneration } from './run-generation';

/**
 * A recurrent model (a MambaLM) and its tokenizer, ready to generate text as `TextGenerator`
 * does for a transformer: the same sampling, stops and events, with a fixed-size state in
 * place of a KV cache.
 */
export class RecurrentGenerator<S extends RecurrentState> {
  constructor(
    readonly model: RecurrentModel<S>,
    readonly tokenizer: Tokenizer,
  ) {
    if (tokenizer.vocabSize !== model.vocabSize) {
      throw new Error(
        `RecurrentGenerator: the tokenizer has ${tokenizer.vocabSize} tokens but the model's vocabulary has ` +
          `${model.vocabSize} (vocabSize); use the tokenizer the model was trained with`,
      );
    }
  }

  /** The ids of a text prompt, BOS first for llama2.c tokenizers. */
  encode(text: string): number[] {
    return encodePrompt(this.tokenizer, text);
  }

  /**
   * Streams the generation after `prompt` (text, or token ids used as they are). Throws at once
   * when the prompt is empty or a setting is invalid; the state is freed when the stream ends or
   * is closed.
   */
  generate(
    prompt: string | readonly number[],
    options: GenerateOptions = {},
  ): AsyncGenerator<GenerationEvent, void> {
    const ids = typeof prompt === 'string' ? this.encode(prompt) : [...prompt];
    const session = new RecurrentSession(this.model);
    try {
      return new OwningStream(startGeneration(session, this.tokenizer, ids, 0, options, 0), () =>
        session.dispose(),
      );
    } catch (error) {
      session.dispose();
      throw error;
    }
  }
}
