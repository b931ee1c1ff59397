import { resolveStopConfig } from '@loom/sampler';
import { type ChatMessage, type ChatTemplateName, encodeChat } from '@loom/tokenizer';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent } from './generation-event';
import type { InferenceSession } from './inference-session';
import { startGeneration } from './run-generation';
import type { SessionSource } from './session-source';

export interface ChatSessionOptions {
  /** The prompt format (default `plain`: `User: ...` / `Assistant: ...` lines, for models without chat tokens). */
  readonly template?: ChatTemplateName;
  /** A system message placed before the conversation; it is never dropped. */
  readonly system?: string;
  /** Positions the conversation may use (default: the model's maxSeqLen), within the generator's limits. */
  readonly capacity?: number;
  /**
   * Earlier turns to continue (user message, answer, ...; a restored conversation): none is in the cache, so the
   * first turn prefills them, the oldest dropped as usual when they do not fit.
   */
  readonly history?: readonly ChatMessage[];
}

/** The oldest turns (user message and answer) a chat dropped to make room, before the turn's other events. */
export interface DroppedTurns {
  readonly type: 'dropped';
  readonly turns: number;
  /** The messages dropped, oldest first. */
  readonly messages: readonly ChatMessage[];
}

/** What a chat turn streams: a `dropped` notice when old turns had to go, then the generation's events. */
export type ChatEvent = DroppedTurns | GenerationEvent;

/** A turn's conversation as it will be sent: the history kept, the new message, and what was dropped. */
interface FittedTurn {
  readonly messages: readonly ChatMessage[];
  readonly prompt: readonly number[];
  readonly dropped: readonly ChatMessage[];
  /** Leading prompt tokens a context shift keeps: BOS and the system message. */
  readonly keep: number;
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
 *
 * When the context fills, the oldest whole turns go (the system message stays) until the prompt leaves room for
 * the answer — `stop.maxNewTokens` positions, or a quarter of the capacity without it — and the kept history is
 * prefilled again from where it changed; the turn's stream then starts with a `dropped` notice. An answer that
 * fills the context itself stops there (`context-full`), or with `contextShift` slides the window, keeping BOS and
 * the system message.
 */
export class ChatSession {
  readonly template: ChatTemplateName;
  readonly #messages: ChatMessage[] = [];
  readonly #session: InferenceSession;

  constructor(
    readonly generator: SessionSource,
    options: ChatSessionOptions = {},
  ) {
    this.template = options.template ?? 'plain';
    if (options.system !== undefined) this.#messages.push({ role: 'system', content: options.system });
    const history = options.history ?? [];
    if (history.length % 2 !== 0) {
      throw new Error(
        `ChatSession: history must be whole turns (a user message and its answer each), got ${history.length} messages`,
      );
    }
    for (const [i, message] of history.entries()) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      if (message.role !== role) {
        throw new Error(
          `ChatSession: history[${i}] must be a ${role} message (the turns alternate, user first), got ${message.role}`,
        );
      }
      this.#messages.push(message);
    }
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

  /** Positions the conversation may use. */
  get capacity(): number {
    return this.#session.capacity;
  }

  /**
   * Sends a user message and streams the answer; once the stream ends (or is left early) the answer joins the
   * conversation, and the turns dropped for it leave. Throws at once when a setting is invalid, or when the message
   * (with the system message) does not fit in the context even alone.
   */
  send(content: string, options: GenerateOptions = {}): AsyncGenerator<ChatEvent, void> {
    const { messages, prompt, dropped, keep } = this.#fit({ role: 'user', content }, options);
    const reused = Math.min(commonPrefix(this.#session.tokens, prompt), prompt.length - 1);
    this.#session.truncate(reused);
    const events = startGeneration(this.#session, this.generator.tokenizer, prompt, reused, options, keep);
    return this.#turn(messages, dropped, events);
  }

  /** Frees the cache. */
  dispose(): void {
    this.#session.dispose();
  }

  /** The conversation plus `message`, less the oldest turns that must go to leave room for the answer. */
  #fit(message: ChatMessage, options: GenerateOptions): FittedTurn {
    const { capacity } = this;
    const { maxNewTokens } = resolveStopConfig(options.stop);
    const room = Number.isFinite(maxNewTokens) ? maxNewTokens : Math.ceil(capacity / 4);
    const first = this.#messages[0]?.role === 'system' ? 1 : 0;
    const system = this.#messages.slice(0, first);
    const turns = this.#messages.slice(first); // user message, answer, user message, answer, ...
    for (let drop = 0; ; drop += 2) {
      const messages = [...system, ...turns.slice(drop), message];
      const prompt = encodeChat(this.generator.tokenizer, this.template, messages);
      if (prompt.length + room > capacity && drop < turns.length) continue;
      if (prompt.length > capacity) {
        throw new Error(
          `ChatSession: the message takes ${prompt.length} tokens with the template${first ? ' and the system message' : ''} ` +
            `but the context holds ${capacity} positions; shorten it or use a larger capacity`,
        );
      }
      return { messages, prompt, dropped: turns.slice(0, drop), keep: this.#lead(system, prompt) };
    }
  }

  /** How many of the prompt's first tokens are BOS and the system message: its rendering before any user text. */
  #lead(system: readonly ChatMessage[], prompt: readonly number[]): number {
    const { tokenizer } = this.generator;
    if (system.length === 0) return prompt[0] === tokenizer.bos ? 1 : 0;
    const empty: ChatMessage = { role: 'user', content: '' };
    return commonPrefix(prompt, encodeChat(tokenizer, this.template, [...system, empty]));
  }

  async *#turn(
    messages: readonly ChatMessage[],
    dropped: readonly ChatMessage[],
    events: AsyncGenerator<GenerationEvent, void>,
  ): AsyncGenerator<ChatEvent, void> {
    let answer = '';
    try {
      if (dropped.length > 0) yield { type: 'dropped', turns: dropped.length / 2, messages: dropped };
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
