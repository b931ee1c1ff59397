import { StoppingCriteria, type StopReason } from '@loom/sampler';
import { StreamDecoder, type Tokenizer } from '@loom/tokenizer';
import { shiftedWindow } from './context-shift';
import type { DecodingSession } from './decoding-session';
import { defaultEosTokens } from './default-stops';
import type { GenerateOptions } from './generate-options';
import type { GenerationEvent, GenerationTimings } from './generation-event';
import { type Choice, TokenChooser } from './token-chooser';

/** Everything one generation needs, checked before it starts. */
interface Plan {
  readonly session: DecodingSession;
  readonly tokenizer: Tokenizer;
  readonly prompt: readonly number[];
  readonly reused: number;
  readonly chooser: TokenChooser;
  readonly criteria: StoppingCriteria;
  readonly signal: AbortSignal | undefined;
  /** Leading tokens a context shift keeps; undefined when the generation stops at a full context instead. */
  readonly keep: number | undefined;
}

function perSecond(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : 0;
}

/** Throws unless a prompt of `length` tokens can start a generation in a context of `capacity` positions. */
export function checkPromptFits(length: number, capacity: number, maxSeqLen: number): void {
  if (length === 0) {
    throw new Error('generate: the prompt is empty; give at least one token for the model to continue from');
  }
  if (length > capacity) {
    throw new Error(
      `generate: the prompt has ${length} tokens but the context holds ${capacity} positions ` +
        `(the model's maxSeqLen is ${maxSeqLen}); shorten the prompt`,
    );
  }
}

/**
 * Starts generating after `prompt`, of which the session already holds the first `reused` tokens; with
 * `options.contextShift` a full context keeps the prompt's first `keep` tokens (BOS, a system message) and slides.
 * Throws at once when the prompt is empty or does not fit, or when a sampling or stop setting is invalid; otherwise
 * returns the stream of events, which does the work as it is iterated.
 */
export function startGeneration(
  session: DecodingSession,
  tokenizer: Tokenizer,
  prompt: readonly number[],
  reused: number,
  options: GenerateOptions,
  keep: number,
): AsyncGenerator<GenerationEvent, void> {
  // The session holds the `reused` tokens and nothing after them, so reused + remaining is its capacity.
  checkPromptFits(prompt.length, reused + session.remaining, session.maxSeqLen);
  const chooser = new TokenChooser(options.sampling ?? {}, options.withLogits);
  chooser.observe(prompt);
  const criteria = new StoppingCriteria({ eosTokenIds: defaultEosTokens(tokenizer), ...options.stop });
  return stream({
    session,
    tokenizer,
    prompt,
    reused,
    chooser,
    criteria,
    signal: options.signal,
    keep: options.contextShift === true ? keep : undefined,
  });
}

/**
 * One prefill pass over the prompt's new tokens, then one decode step per token: a `token` event each, then a
 * `done` event. The session keeps every token it ran (all but the last generated one). When the next token does not
 * fit, the context shifts: the session keeps its first `keep` tokens and the newest half of the rest is prefilled
 * again after them, at the positions it now has (so RoPE and learned positions see a fresh sequence). Logits are
 * disposed before each event, so the number of live tensors stays the same from step to step.
 */
async function* stream(plan: Plan): AsyncGenerator<GenerationEvent, void> {
  const { session, prompt, reused, chooser, criteria, signal, keep } = plan;
  const start = performance.now();
  const decoder = new StreamDecoder(plan.tokenizer);
  decoder.push(prompt[prompt.length - 1]); // a piece's text can depend on the token before it
  const tokens: number[] = [];
  let text = '';
  let pending = prompt.slice(reused);
  let prefillMs = 0;
  let decodeMs = 0;
  let firstTokenMs = 0;
  let reason: StopReason | null = null;
  let contextShifts = 0;
  while (reason === null) {
    if (signal?.aborted) {
      reason = 'aborted';
      break;
    }
    if (pending.length > session.remaining) {
      const window = keep === undefined ? undefined : shiftedWindow([...session.tokens, ...pending], keep);
      if (keep === undefined || window === undefined || window.length > session.capacity) {
        reason = 'context-full';
        break;
      }
      session.truncate(keep);
      pending = window.slice(keep);
      contextShifts++;
    }
    const stepStart = performance.now();
    const logits = session.feed(pending);
    let choice: Choice;
    try {
      choice = await chooser.choose(logits);
    } finally {
      logits.dispose();
    }
    const elapsed = performance.now() - stepStart;
    if (tokens.length === 0) {
      prefillMs = elapsed;
      firstTokenMs = performance.now() - start;
    } else {
      decodeMs += elapsed;
    }
    const { token } = choice;
    tokens.push(token);
    const step = criteria.push(token, decoder.push(token));
    text += step.text;
    reason = step.reason;
    pending = [token];
    yield { type: 'token', ...choice, text: step.text };
  }
  const held = reason === 'aborted' || reason === 'context-full' ? criteria.flush() : '';
  const tail = reason === 'stop-string' ? '' : held + decoder.flush();
  text += tail;
  const timings: GenerationTimings = {
    timeToFirstTokenMs: firstTokenMs,
    prefillMs,
    decodeMs,
    prefillTokensPerSecond: perSecond(prompt.length - reused, prefillMs),
    decodeTokensPerSecond: perSecond(Math.max(0, tokens.length - 1), decodeMs),
  };
  yield {
    type: 'done',
    text: tail,
    stats: {
      stopReason: reason,
      promptTokens: prompt,
      reusedTokens: reused,
      tokens,
      text,
      contextShifts,
      timings,
    },
  };
}
