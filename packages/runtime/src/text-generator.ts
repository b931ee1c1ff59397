import type { MemoryLimits } from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { resolveStopConfig } from '@loom/sampler';
import type { Tokenizer } from '@loom/tokenizer';
import { ChatSession, type ChatSessionOptions } from './chat-session';
import { encodePrompt } from './default-stops';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent } from './generation-event';
import { InferenceSession, type InferenceSessionOptions } from './inference-session';
import { OwningStream } from './owning-stream';
import { checkPromptFits, startGeneration } from './run-generation';

export interface TextGeneratorOptions {
  /**
   * Memory each session's cache may take (for example `{ totalBytes: os.totalmem() }`, or a WebGPU adapter's
   * `maxBufferSize` as `tensorBytes`), checked by arithmetic before it is allocated (default: no limit).
   */
  readonly limits?: MemoryLimits;
}

/** How `generate` runs: the settings of every generation, and the size of its context. */
export interface TextGenerateOptions extends GenerateOptions {
  /**
   * Positions the cache holds, at most the model's maxSeqLen (default: the prompt plus `stop.maxNewTokens`, at most
   * the maxSeqLen; without maxNewTokens the maxSeqLen).
   */
  readonly context?: number;
}

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
  readonly limits: MemoryLimits;

  constructor(
    readonly model: TransformerLM,
    readonly tokenizer: Tokenizer,
    options: TextGeneratorOptions = {},
  ) {
    checkTokenizer(model, tokenizer);
    this.limits = options.limits ?? {};
  }

  /** The ids of a text prompt, BOS first for llama2.c tokenizers (as llama2.c's run.c encodes). */
  encode(text: string): number[] {
    return encodePrompt(this.tokenizer, text);
  }

  /** An empty sequence with its own cache, within the generator's limits; dispose it when done. */
  session(options: InferenceSessionOptions = {}): InferenceSession {
    return new InferenceSession(this.model, { limits: this.limits, ...options });
  }

  /**
   * Streams the generation after `prompt` (text, or token ids used as they are), with a cache of the context it
   * needs. Throws at once, before allocating, when the prompt is empty or longer than the context, the context is
   * invalid or over the limits, or a setting is invalid. The cache is freed when the stream ends, is left early or
   * closed with `return()` (even before the first event), and at the latest when the stream is garbage-collected.
   */
  generate(
    prompt: string | readonly number[],
    options: TextGenerateOptions = {},
  ): AsyncGenerator<GenerationEvent, void> {
    const ids = typeof prompt === 'string' ? this.encode(prompt) : [...prompt];
    const { maxSeqLen } = this.model.config;
    const context =
      options.context ?? Math.min(maxSeqLen, ids.length + resolveStopConfig(options.stop).maxNewTokens);
    if (!Number.isInteger(context) || context < 1 || context > maxSeqLen) {
      throw new Error(
        `generate: context must be an integer in [1, ${maxSeqLen}] (the model's maxSeqLen), got ${context}`,
      );
    }
    checkPromptFits(ids.length, context, maxSeqLen);
    const session = this.session({ capacity: context });
    try {
      const keep = ids[0] === this.tokenizer.bos ? 1 : 0; // a context shift keeps BOS
      const events = startGeneration(session, this.tokenizer, ids, 0, options, keep);
      return new OwningStream(events, () => session.dispose());
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
