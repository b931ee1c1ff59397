import {
  defaultEosTokens,
  type GenerateOptions,
  type GenerationEvent,
  type InferenceSession,
  type TextGenerator,
  TokenChooser,
} from '@loom/runtime';
import { resolveStopConfig, StoppingCriteria, type StopReason } from '@loom/sampler';
import { StreamDecoder } from '@loom/tokenizer';

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

const perSecond = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : 0);

/** The oldest tokens of the story that left the context to make room for the reply. */
export interface DroppedText {
  readonly type: 'dropped-text';
  readonly tokens: number;
}

/** What a story turn streams: a `dropped-text` notice when the story was cut, then the generation's events. */
export type StoryEvent = DroppedText | GenerationEvent;

/**
 * A story written in turns, for models without a chat format (TinyStories, a model you trained): each turn appends
 * the user's text to the story so far and the model continues it — the first turn is exactly a plain completion of
 * the text. The cache is kept between turns: the story is encoded again, the cached tokens it shares are kept and
 * only the rest is prefilled. When the story no longer leaves room for the reply, its oldest tokens go (BOS stays)
 * and the turn starts with a `dropped-text` notice.
 *
 * `@loom/runtime` has no public "continue this text in a kept session" call (ChatSession always applies a chat
 * template), so the prefill/decode loop is written here on the runtime's `InferenceSession` and `TokenChooser`.
 */
export class StorySession {
  #story = '';
  readonly #session: InferenceSession;

  constructor(readonly generator: TextGenerator) {
    this.#session = generator.session();
  }

  get cachedTokens(): readonly number[] {
    return this.#session.tokens;
  }

  get capacity(): number {
    return this.#session.cache.capacity;
  }

  send(content: string, options: GenerateOptions = {}): AsyncGenerator<StoryEvent, void> {
    const joined = this.#story === '' || /\s$/.test(this.#story) || /^\s/.test(content) ? '' : ' ';
    const story = `${this.#story}${joined}${content}`;
    let prompt = this.generator.encode(story);
    const { maxNewTokens } = resolveStopConfig(options.stop);
    // Room for the reply: maxNewTokens (a quarter of the context without it), at most half the context, so that
    // a long reply runs into the end of the context instead of pushing the whole story out.
    const wanted = Number.isFinite(maxNewTokens) ? maxNewTokens : Math.ceil(this.capacity / 4);
    const room = Math.min(wanted, Math.floor(this.capacity / 2));
    const excess = prompt.length + room - this.capacity;
    const bos = this.generator.tokenizer.kind === 'llama2c' ? 1 : 0;
    const dropped = Math.max(0, excess);
    if (excess > 0) prompt = [...prompt.slice(0, bos), ...prompt.slice(bos + excess)];
    const reused = Math.min(commonPrefix(this.#session.tokens, prompt), prompt.length - 1);
    this.#session.truncate(reused);
    const chooser = new TokenChooser(options.sampling ?? {});
    chooser.observe(prompt);
    const criteria = new StoppingCriteria({
      eosTokenIds: defaultEosTokens(this.generator.tokenizer),
      ...options.stop,
    });
    this.#story = story;
    return this.#turn(prompt, reused, dropped, chooser, criteria, options.signal);
  }

  dispose(): void {
    this.#session.dispose();
  }

  async *#turn(
    prompt: readonly number[],
    reused: number,
    dropped: number,
    chooser: TokenChooser,
    criteria: StoppingCriteria,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StoryEvent, void> {
    const { tokenizer } = this.generator;
    if (dropped > 0) yield { type: 'dropped-text', tokens: dropped };
    const decoder = new StreamDecoder(tokenizer);
    decoder.push(prompt[prompt.length - 1]);
    const start = performance.now();
    const tokens: number[] = [];
    let text = '';
    let pending = prompt.slice(reused);
    let prefillMs = 0;
    let decodeMs = 0;
    let firstTokenMs = 0;
    let reason: StopReason | null = null;
    try {
      while (reason === null) {
        if (signal?.aborted) reason = 'aborted';
        else if (pending.length > this.#session.remaining) reason = 'context-full';
        if (reason !== null) break;
        const stepStart = performance.now();
        const logits = this.#session.feed(pending);
        const choice = await chooser.choose(logits).finally(() => logits.dispose());
        if (tokens.length === 0) {
          prefillMs = performance.now() - stepStart;
          firstTokenMs = performance.now() - start;
        } else decodeMs += performance.now() - stepStart;
        tokens.push(choice.token);
        const step = criteria.push(choice.token, decoder.push(choice.token));
        text += step.text;
        reason = step.reason;
        pending = [choice.token];
        yield { type: 'token', ...choice, text: step.text };
      }
      const tail = reason === 'stop-string' ? '' : criteria.flush() + decoder.flush();
      text += tail;
      const timings = {
        timeToFirstTokenMs: firstTokenMs,
        prefillMs,
        decodeMs,
        prefillTokensPerSecond: perSecond(prompt.length - reused, prefillMs),
        decodeTokensPerSecond: perSecond(Math.max(0, tokens.length - 1), decodeMs),
      };
      const stats = { stopReason: reason, promptTokens: prompt, reusedTokens: reused, tokens, text, timings };
      yield { type: 'done', text: tail, stats };
    } finally {
      this.#story += text;
    }
  }
}
