import { randomUUID } from 'node:crypto';
import type { Tokenizer } from '@loom/tokenizer';
import type { ParsedRequest } from './parse-request';
import type { Finish, TokenStep } from './sequence';

const utf8 = new TextDecoder();

interface TokenText {
  readonly token: string;
  readonly bytes: number[];
}

interface ChatLogprob extends TokenText {
  readonly logprob: number;
  readonly top_logprobs: (TokenText & { readonly logprob: number })[];
}

/** OpenAI's legacy completions log-probabilities, one entry per token. */
interface CompletionLogprobs {
  readonly tokens: string[];
  readonly token_logprobs: number[];
  readonly top_logprobs: Record<string, number>[];
  readonly text_offset: number[];
}

type Json = Record<string, unknown>;

/**
 * Builds the OpenAI response objects of one request — `chat.completion` or `text_completion`, whole or as stream
 * chunks — from the batcher's token steps, with usage counts and log-probabilities in OpenAI's two layouts.
 */
export class ResponseBuilder {
  readonly id: string;
  readonly created = Math.floor(Date.now() / 1000);
  readonly #chat: boolean;
  #previous: number;
  #text = '';
  readonly #chatLogprobs: ChatLogprob[] = [];
  readonly #completionLogprobs: CompletionLogprobs = {
    tokens: [],
    token_logprobs: [],
    top_logprobs: [],
    text_offset: [],
  };
  #offset = 0;

  constructor(
    readonly request: ParsedRequest,
    readonly model: string,
    readonly tokenizer: Tokenizer,
  ) {
    this.#chat = request.kind === 'chat';
    this.id = `${this.#chat ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
    const { prompt } = request.generation;
    this.#previous = prompt[prompt.length - 1];
  }

  /** The first chunk of a chat stream: the assistant's role. */
  roleChunk(): Json {
    return this.#chunk({ role: 'assistant', content: '' }, null, null);
  }

  /** Records a token; gives its stream chunk, or undefined when it adds nothing to show. */
  push(step: TokenStep): Json | undefined {
    this.#text += step.text;
    const logprobs = this.#logprobs(step);
    if (step.text === '' && logprobs === null) return undefined;
    return this.#chunk({ content: step.text }, logprobs, null);
  }

  /** The last chunk of a stream: the text held back, if any, and the finish reason. */
  finishChunk(finish: Finish): Json {
    this.#text += finish.text;
    return this.#chunk(finish.text === '' ? {} : { content: finish.text }, null, finish.reason);
  }

  /** The chunk OpenAI sends after the last one when `stream_options.include_usage` is set. */
  usageChunk(finish: Finish): Json {
    return { ...this.#head(), choices: [], usage: usage(finish) };
  }

  /** The whole response of a request that did not stream. */
  complete(finish: Finish): Json {
    this.#text += finish.text;
    const logprobs = this.#allLogprobs();
    const choice = this.#chat
      ? {
          index: 0,
          message: { role: 'assistant', content: this.#text },
          logprobs,
          finish_reason: finish.reason,
        }
      : { index: 0, text: this.#text, logprobs, finish_reason: finish.reason };
    return { ...this.#head(), choices: [choice], usage: usage(finish) };
  }

  #head(): Json {
    const object = this.#chat ? 'chat.completion' : 'text_completion';
    return {
      id: this.id,
      object: this.request.stream && this.#chat ? 'chat.completion.chunk' : object,
      created: this.created,
      model: this.model,
    };
  }

  #chunk(delta: Json, logprobs: Json | null, finishReason: string | null): Json {
    const choice = this.#chat
      ? { index: 0, delta, logprobs, finish_reason: finishReason }
      : { index: 0, text: delta.content ?? '', logprobs, finish_reason: finishReason };
    return { ...this.#head(), choices: [choice] };
  }

  #tokenText(id: number, previous: number): TokenText {
    const bytes = this.tokenizer.decodeBytes([id], previous);
    return { token: utf8.decode(bytes), bytes: [...bytes] };
  }

  /** Records a step's log-probabilities; the stream chunk's `logprobs` (null when none were asked for). */
  #logprobs(step: TokenStep): Json | null {
    const { topLogprobs } = this.request.generation;
    const previous = this.#previous;
    this.#previous = step.token;
    if (topLogprobs === undefined) return null;
    const { logprob } = step;
    // Only a sequence that asked for none is chosen without them (Sequence.greedy).
    if (logprob === undefined)
      throw new Error(`token ${step.token} came without the log-probability asked for`);
    const chosen = this.#tokenText(step.token, previous);
    const top = (step.top ?? []).map((t) => ({ ...this.#tokenText(t.token, previous), logprob: t.logprob }));
    if (this.#chat) {
      const entry = { ...chosen, logprob, top_logprobs: top };
      this.#chatLogprobs.push(entry);
      return { content: [entry] };
    }
    const lp = this.#completionLogprobs;
    const tops = Object.fromEntries(top.map((t) => [t.token, t.logprob]));
    lp.tokens.push(chosen.token);
    lp.token_logprobs.push(logprob);
    lp.top_logprobs.push(tops);
    lp.text_offset.push(this.#offset);
    this.#offset += chosen.token.length;
    return {
      tokens: [chosen.token],
      token_logprobs: [logprob],
      top_logprobs: [tops],
      text_offset: [this.#offset - chosen.token.length],
    };
  }

  #allLogprobs(): Json | null {
    if (this.request.generation.topLogprobs === undefined) return null;
    return this.#chat ? { content: this.#chatLogprobs } : { ...this.#completionLogprobs };
  }
}

function usage(finish: Finish): Json {
  return {
    prompt_tokens: finish.promptTokens,
    completion_tokens: finish.completionTokens,
    total_tokens: finish.promptTokens + finish.completionTokens,
  };
}
