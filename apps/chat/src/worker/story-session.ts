import {
  type GenerateOptions,
  type GenerationEvent,
  type InferenceSession,
  startGeneration,
  type TextGenerator,
} from '@loom/runtime';
import { resolveStopConfig } from '@loom/sampler';

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** How a story session starts: the positions it may use, and a story to continue (a restored conversation). */
export interface StorySessionOptions {
  /** Positions the story may use (default: the model's maxSeqLen), within the generator's limits. */
  readonly capacity?: number;
  /** The turns so far, user's and model's, oldest first: the first turn prefills them (none is in the cache). */
  readonly history?: readonly { readonly role: 'user' | 'assistant'; readonly text: string }[];
}

/** The story after `content`: the user's text joins it with a space unless one side has it already. */
function joinUserText(story: string, content: string): string {
  const joined = story === '' || /\s$/.test(story) || /^\s/.test(content) ? '' : ' ';
  return `${story}${joined}${content}`;
}

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
 * The turns run on the runtime's own `startGeneration` over a kept `InferenceSession` (ChatSession would apply a
 * chat template).
 */
export class StorySession {
  #story = '';
  readonly #session: InferenceSession;

  constructor(
    readonly generator: TextGenerator,
    options: StorySessionOptions = {},
  ) {
    this.#session = generator.session({ capacity: options.capacity });
    // The model's text continues the story as it was generated; the user's joins it as `send` joins it.
    for (const { role, text } of options.history ?? []) {
      this.#story = role === 'user' ? joinUserText(this.#story, text) : this.#story + text;
    }
  }

  /** The story so far. */
  get story(): string {
    return this.#story;
  }

  get cachedTokens(): readonly number[] {
    return this.#session.tokens;
  }

  get capacity(): number {
    return this.#session.capacity;
  }

  send(content: string, options: GenerateOptions = {}): AsyncGenerator<StoryEvent, void> {
    const story = joinUserText(this.#story, content);
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
    const events = startGeneration(this.#session, this.generator.tokenizer, prompt, reused, options, bos);
    this.#story = story;
    return this.#turn(events, dropped);
  }

  dispose(): void {
    this.#session.dispose();
  }

  /** The generation's events after a `dropped-text` notice; the text it adds is appended to the story. */
  async *#turn(
    events: AsyncGenerator<GenerationEvent, void>,
    dropped: number,
  ): AsyncGenerator<StoryEvent, void> {
    if (dropped > 0) yield { type: 'dropped-text', tokens: dropped };
    try {
      for await (const event of events) {
        this.#story += event.text;
        yield event;
      }
    } finally {
      await events.return();
    }
  }
}
