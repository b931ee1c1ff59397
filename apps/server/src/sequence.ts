import { cacheForModel, type KVSlot, type ModelKVCache, type SlotKVCache } from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { defaultEosTokens } from '@loom/runtime';
import { isPlainGreedy, Sampler, StoppingCriteria, type StopReason, type TokenLogprob } from '@loom/sampler';
import { StreamDecoder, type Tokenizer } from '@loom/tokenizer';
import type { GenerationRequest } from './parse-request';

/** OpenAI's reasons a choice ended. */
export type FinishReason = 'stop' | 'length';

/** One generated token and the text it completes (empty while a character or a stop string is incomplete). */
export interface TokenStep {
  readonly token: number;
  readonly text: string;
  /** log p(token); undefined for a greedy sequence chosen by its argmax alone (one that asked for none). */
  readonly logprob: number | undefined;
  readonly top: readonly TokenLogprob[] | undefined;
}

/** How a finished generation ended. */
export interface Finish {
  readonly reason: FinishReason;
  /** The text the last step still held back. */
  readonly text: string;
  readonly promptTokens: number;
  /** Generated tokens, the one that stopped it (EOS) included. */
  readonly completionTokens: number;
}

function finishReason(reason: StopReason): FinishReason {
  return reason === 'eos' || reason === 'stop-string' ? 'stop' : 'length';
}

/**
 * One request being decoded by the batcher: its sampler, stopping criteria and text decoder, the tokens it still
 * has to run through the model (the rest of its prompt, then each sampled token) and, once admitted, its own
 * key/value cache of prompt plus max_tokens positions.
 */
export class Sequence {
  readonly sampler: Sampler;
  /**
   * Greedy with no bias, penalties or log-probabilities: the argmax of the logits is all it needs, so the batcher
   * may take it on the device (`chooseArgmax`) instead of reading the row.
   */
  readonly greedy: boolean;
  readonly criteria: StoppingCriteria;
  readonly #decoder: StreamDecoder;
  readonly #promptTokens: number;
  #pending: number[];
  #cache: ModelKVCache | KVSlot | undefined;
  #capacity = 0;
  #offset = 0;
  #generated = 0;

  constructor(
    tokenizer: Tokenizer,
    readonly request: GenerationRequest,
    /** When the request arrived (performance.now()). */
    readonly arrival: number,
  ) {
    this.sampler = new Sampler(request.sampling);
    this.sampler.observe(request.prompt);
    this.greedy = isPlainGreedy(this.sampler.config) && request.topLogprobs === undefined;
    this.criteria = new StoppingCriteria({
      eosTokenIds: defaultEosTokens(tokenizer),
      stopStrings: request.stopStrings,
      maxNewTokens: request.maxTokens,
    });
    this.#decoder = new StreamDecoder(tokenizer);
    this.#decoder.push(request.prompt[request.prompt.length - 1]); // a piece's text can depend on the token before it
    this.#promptTokens = request.prompt.length;
    this.#pending = [...request.prompt];
  }

  /**
   * Takes a slot of `slots` (the batcher's shared cache, whose slots hold the model's whole context) or else
   * allocates the cache for the prompt plus max_tokens positions, at most the model's context: a ring of W slots
   * for a sliding-window model whose window W is shorter.
   */
  admit(model: TransformerLM, slots?: SlotKVCache): void {
    const { maxSeqLen } = model.config;
    this.#capacity = Math.min(maxSeqLen, this.#promptTokens + (this.request.maxTokens ?? maxSeqLen));
    this.#cache =
      slots?.acquire() ?? cacheForModel(model.config, { capacity: this.#capacity, backend: model.backend });
  }

  get cache(): ModelKVCache | KVSlot {
    if (this.#cache === undefined) throw new Error('Sequence: not admitted yet');
    return this.#cache;
  }

  /** Positions already run through the model. */
  get offset(): number {
    return this.#offset;
  }

  /** The generated tokens so far. */
  get generated(): number {
    return this.#generated;
  }

  /** The tokens to run this step: a decode token, or the next chunk of the prompt. */
  next(chunk: number): number[] {
    return this.#pending.slice(0, chunk);
  }

  /** Records that `count` pending tokens ran; true when the prompt is all in and the logits predict a new token. */
  ran(count: number): boolean {
    this.#pending = this.#pending.slice(count);
    this.#offset += count;
    return this.#pending.length === 0;
  }

  /**
   * Samples the next token from the logits row of the last token that ran; gives the step and, when the
   * generation ends with it, how it finished.
   */
  choose(row: Float32Array): { step: TokenStep; finish: Finish | undefined } {
    const { token, logprob, top } = this.sampler.sample(row);
    return this.#take(token, logprob, top);
  }

  /** The step of a greedy sequence whose argmax the batcher took on the device (see `greedy`). */
  chooseArgmax(token: number): { step: TokenStep; finish: Finish | undefined } {
    if (!this.greedy) throw new Error('Sequence.chooseArgmax: this sequence samples from its logits row');
    return this.#take(token, undefined, undefined);
  }

  #take(
    token: number,
    logprob: number | undefined,
    top: readonly TokenLogprob[] | undefined,
  ): { step: TokenStep; finish: Finish | undefined } {
    this.#generated++;
    const stop = this.criteria.push(token, this.#decoder.push(token));
    const step = { token, text: stop.text, logprob, top };
    if (stop.reason !== null) {
      const tail = stop.reason === 'stop-string' ? '' : this.#decoder.flush();
      return { step, finish: this.#finish(finishReason(stop.reason), tail) };
    }
    if (this.#offset >= this.#capacity) {
      return { step, finish: this.#finish('length', this.criteria.flush() + this.#decoder.flush()) };
    }
    this.#pending = [token];
    return { step, finish: undefined };
  }

  /** Frees the cache, or gives its slot back (idempotent). */
  release(): void {
    const cache = this.#cache;
    this.#cache = undefined;
    if (cache === undefined) return;
    if ('slot' in cache) cache.release();
    else cache.dispose();
  }

  #finish(reason: FinishReason, text: string): Finish {
    return { reason, text, promptTokens: this.#promptTokens, completionTokens: this.#generated };
  }
}
