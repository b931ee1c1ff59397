import { setImmediate as nextTurn } from 'node:timers/promises';
import { kvCacheBytes, SlotKVCache } from '@loom/kvcache';
import { forwardBatch, headDim, type TransformerLM } from '@loom/nn';
import { checkLogitSum, type DeviceArgmax, deviceArgmax } from '@loom/runtime';
import type { Tensor } from '@loom/tensor';
import type { Tokenizer } from '@loom/tokenizer';
import { ApiError } from './api-error';
import type { Metrics } from './metrics';
import type { GenerationRequest } from './parse-request';
import { type Finish, Sequence, type TokenStep } from './sequence';

/** Where a sequence's results go. Exactly one of `done` and `fail` is called, once, unless the signal aborted. */
export interface SequenceListener {
  token(step: TokenStep): void;
  done(finish: Finish): void;
  fail(error: ApiError): void;
}

export interface BatcherOptions {
  /** Sequences decoded together. */
  readonly parallel: number;
  /** Requests that may wait for a free sequence; beyond that `submit` refuses with 429. */
  readonly queue: number;
  /** Milliseconds a request may take from its arrival, waiting included. */
  readonly timeoutMs: number;
  /** Prompt tokens of one sequence run per step (default 32), so a long prompt does not stall the others. */
  readonly prefillChunk?: number;
}

/**
 * Bytes of keys and values up to which the sequences share one slot cache of `parallel` slots of the whole context,
 * allocated while the batcher is busy; past it each sequence gets a cache of its own request's size instead.
 */
const SHARED_CACHE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The cache the decoding sequences share, its slots attended together in each decode step: undefined for a
 * sliding-window model (its sequences keep rings) or when `parallel` whole contexts would pass SHARED_CACHE_MAX_BYTES.
 */
function sharedCache(model: TransformerLM, parallel: number): SlotKVCache | undefined {
  const { config } = model;
  if (config.slidingWindow !== undefined && config.slidingWindow < config.maxSeqLen) return undefined;
  const bytes = kvCacheBytes({
    batch: parallel,
    seqLen: config.maxSeqLen,
    layers: config.numLayers,
    kvHeads: config.numKvHeads,
    headDim: headDim(config),
    bytesPerElement: 4,
  });
  if (bytes > SHARED_CACHE_MAX_BYTES) return undefined;
  try {
    return SlotKVCache.forModel(config, { slots: parallel, backend: model.backend });
  } catch {
    return undefined; // no room for it now: each sequence allocates its own cache, or fails with its own error
  }
}

interface Entry {
  readonly sequence: Sequence;
  readonly listener: SequenceListener;
  readonly signal: AbortSignal;
}

/**
 * Continuous batching: requests wait in a bounded queue, up to `parallel` of them are decoded together, and each
 * step runs ONE forward pass (`forwardBatch`) over every active sequence — a decode token each, or the next chunk
 * of a prompt — so the weights are read once per step. Requests join and leave between steps; a sequence whose
 * signal aborted or whose time ran out leaves at the next step and its cache is freed then.
 */
export class Batcher {
  readonly #waiting: Entry[] = [];
  readonly #running: Entry[] = [];
  readonly #prefillChunk: number;
  #loop: Promise<void> | undefined;
  /** The slot cache of the current busy spell (see sharedCache), freed when nothing is left to do. */
  #slots: SlotKVCache | undefined;

  constructor(
    readonly model: TransformerLM,
    readonly tokenizer: Tokenizer,
    readonly options: BatcherOptions,
    readonly metrics: Metrics,
  ) {
    this.#prefillChunk = options.prefillChunk ?? 32;
  }

  /** Requests waiting for a free sequence. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Sequences being decoded. */
  get running(): number {
    return this.#running.length;
  }

  /** Queues a generation; throws a 429 ApiError when the queue is full. */
  submit(request: GenerationRequest, listener: SequenceListener, signal: AbortSignal): void {
    if (this.#running.length + this.#waiting.length >= this.options.parallel + this.options.queue) {
      throw new ApiError(
        429,
        'rate_limit_error',
        'rate_limit_exceeded',
        `the server is busy: ${this.#running.length} requests running and ${this.#waiting.length} waiting (the queue holds ${this.options.queue}); retry after a second`,
        null,
        { 'Retry-After': '1' },
      );
    }
    this.#waiting.push({
      sequence: new Sequence(this.tokenizer, request, performance.now()),
      listener,
      signal,
    });
    this.metrics.promptTokens += request.prompt.length;
    this.#loop ??= this.#run().finally(() => {
      this.#loop = undefined;
    });
  }

  /** Resolves when nothing is waiting or running. */
  async idle(): Promise<void> {
    while (this.#loop !== undefined) await this.#loop;
  }

  async #run(): Promise<void> {
    this.#slots = sharedCache(this.model, this.options.parallel);
    try {
      while (this.#waiting.length + this.#running.length > 0) {
        this.#expire(this.#waiting);
        this.#expire(this.#running);
        this.#admit();
        if (this.#running.length > 0) await this.#step();
        await nextTurn(); // let requests arrive and clients leave between steps
      }
    } finally {
      this.#slots?.dispose();
      this.#slots = undefined;
    }
  }

  /** Drops entries whose client left, and fails those past their time limit. */
  #expire(entries: Entry[]): void {
    const now = performance.now();
    for (let i = entries.length - 1; i >= 0; i--) {
      const { sequence, listener, signal } = entries[i];
      const late = now - sequence.arrival > this.options.timeoutMs;
      if (!signal.aborted && !late) continue;
      entries.splice(i, 1);
      sequence.release();
      if (signal.aborted) {
        this.metrics.aborted++;
        continue;
      }
      listener.fail(
        new ApiError(
          504,
          'timeout_error',
          'request_timeout',
          `the request took longer than the server's time limit of ${this.options.timeoutMs / 1000} s; ask for fewer tokens or retry later`,
        ),
      );
    }
  }

  #admit(): void {
    while (this.#running.length < this.options.parallel && this.#waiting.length > 0) {
      const entry = this.#waiting.shift() as Entry;
      try {
        entry.sequence.admit(this.model, this.#slots);
      } catch (error) {
        entry.listener.fail(serverError(error));
        continue;
      }
      this.#running.push(entry);
    }
  }

  async #step(): Promise<void> {
    const batch = [...this.#running];
    const rows = batch.map(({ sequence }) => ({
      tokens: sequence.next(this.#prefillChunk),
      offset: sequence.offset,
      cache: sequence.cache,
    }));
    const { vocabSize } = this.model.config;
    const start = performance.now();
    let read: StepLogits;
    try {
      const out = forwardBatch(this.model, rows); // [S, vocab]
      try {
        read = await readLogits(
          out,
          batch.every(({ sequence }) => sequence.greedy),
        );
      } finally {
        out.dispose();
      }
    } catch (error) {
      for (const entry of batch) this.#end(entry, () => entry.listener.fail(serverError(error)));
      return;
    }
    let sampled = 0;
    batch.forEach((entry, i) => {
      const { sequence, listener, signal } = entry;
      if (!sequence.ran(rows[i].tokens.length) || signal.aborted) return; // more prompt to prefill, or the client left
      let chosen: ReturnType<Sequence['choose']>;
      try {
        chosen =
          read.kind === 'rows'
            ? sequence.choose(read.logits.subarray(i * vocabSize, (i + 1) * vocabSize))
            : sequence.chooseArgmax(checkedArgmax(read, i));
      } catch (error) {
        this.#end(entry, () => listener.fail(serverError(error)));
        return;
      }
      sampled++;
      if (sequence.generated === 1) this.metrics.firstToken((performance.now() - sequence.arrival) / 1000);
      listener.token(chosen.step);
      const { finish } = chosen;
      if (finish !== undefined) this.#end(entry, () => listener.done(finish));
    });
    this.metrics.step(
      rows.reduce((n, r) => n + r.tokens.length, 0),
      sampled,
      (performance.now() - start) / 1000,
    );
  }

  /** Takes a running entry out, frees its cache, then tells its listener. */
  #end(entry: Entry, tell: () => void): void {
    const at = this.#running.indexOf(entry);
    if (at >= 0) this.#running.splice(at, 1);
    entry.sequence.release();
    if (!entry.signal.aborted) tell();
  }
}

/** What a step reads back: every row of logits, or (every sequence greedy) each row's argmax and sum. */
type StepLogits =
  | { readonly kind: 'rows'; readonly logits: Float32Array }
  | ({ readonly kind: 'argmax' } & DeviceArgmax);

/**
 * Reads a step's logits [S, vocab]: all of them, or with `argmaxOnly` each row's argmax and sum taken on the device
 * (8 bytes a row instead of 4 · vocab; the sum shows a NaN or +Infinity the row holds).
 */
async function readLogits(logits: Tensor, argmaxOnly: boolean): Promise<StepLogits> {
  if (!argmaxOnly) return { kind: 'rows', logits: await logits.float32Data() };
  return { kind: 'argmax', ...(await deviceArgmax(logits)) };
}

/** Row i's argmax; throws when the row holds NaN or +Infinity, as the sampler does for a row it reads. */
function checkedArgmax(read: Extract<StepLogits, { kind: 'argmax' }>, i: number): number {
  checkLogitSum(read.sums[i], 'forwardBatch');
  return read.ids[i];
}

function serverError(error: unknown): ApiError {
  const message = error instanceof Error ? error.message : String(error);
  return new ApiError(500, 'server_error', 'generation_failed', `generation failed: ${message}`);
}
