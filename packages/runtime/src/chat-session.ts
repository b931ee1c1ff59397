import { type ChatMessage, type ChatTemplateName, encodeChat } from '@loom/tokenizer';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent } from './generation-event';
import type { InferenceSession } from './inference-session';
import { startGeneration } from './run-generation';
import type { TextGenerator } from './text-generator';

export interface ChatSessionOptions {
  /** The prompt format (default `plain`: `User: ...` / `Assistant: ...` lines, for models without chat tokens). */
  readonly template?: ChatTemplateName;
  /** A system message placed before the conversation. */
  readonly system?: string;
  /** Positions the conversation may use (default: the model's maxSeqLen). */
  readonly capacity?: number;
}

/** Length of the common beginning of two token lists. */
function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * A conversation that keeps its key/value cache between turns. Each turn renders the whole conversation with the
 * chat template, keeps the cached tokens it shares with that rendering and prefills only the rest: the new user
 * message, and any part of the previous answer whose tokens the template spells differently.
 */
export class ChatSession {
  readonly template: ChatTemplateName;
  readonly #messages: ChatMessage[] = [];
  readonly #session: InferenceSession;

  constructor(
    readonly generator: TextGenerator,
    options: ChatSessionOptions = {},
  ) {
    this.template = options.template ?? 'plain';
    if (options.system !== undefined) this.#messages.push({ role: 'system', content: options.system });
    this.#session = generator.session({ capacity: options.capacity });
  }

  /** The conversation so far. */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
  }

  /** The tokens in the cache. */
  get cachedTokens(): readonly number[] {
    return this.#session.tokens;
  }

  /**
   * Sends a user message and streams the answer; once the stream ends (or is left early) the answer joins the
   * conversation. Throws at once when the conversation no longer fits in the context or a setting is invalid.
   */
  send(content: string, options: GenerateOptions = {}): AsyncGenerator<GenerationEvent, void> {
    const messages: ChatMessage[] = [...this.#messages, { role: 'user', content }];
    const prompt = encodeChat(this.generator.tokenizer, this.template, messages);
    const reused = Math.min(commonPrefix(this.#session.tokens, prompt), prompt.length - 1);
    this.#session.truncate(reused);
    const events = startGeneration(this.#session, this.generator.tokenizer, prompt, reused, options);
    return this.#turn(messages, events);
  }

  /** Frees the cache. */
  dispose(): void {
    this.#session.dispose();
  }

  async *#turn(
    messages: readonly ChatMessage[],
    events: AsyncGenerator<GenerationEvent, void>,
  ): AsyncGenerator<GenerationEvent, void> {
    let answer = '';
    try {
      for await (const event of events) {
        answer += event.text;
        yield event;
      }
    } finally {
      this.#messages.splice(0, this.#messages.length, ...messages, {
        role: 'assistant',
        content: answer.trim(),
      });
    }
  }
}
