import { CpuBackend } from '@loom/backend-cpu';
import { KVCache, SlotKVCache } from '@loom/kvcache';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { forwardBatch, TransformerLM } from '@loom/nn';
import { checkLogitSum, deviceArgmax } from '@loom/runtime';
import { type Backend, setBackend } from '@loom/tensor';
import { backendLabel } from '../backend-label';
import { integerFlag } from '../flags';
import { stories15MShape } from '../model-shapes';
import { sharedDataFile } from '../shared-data';
import { median } from '../stats';
import type { Row, Suite, SuiteOptions, SuiteResult } from '../suite';

/** Concurrent streams measured. */
const STREAMS = [1, 2, 4, 8, 16];
const PROMPT_TOKENS = 8;
const ROUNDS = 3;

/** How the streams keep their keys and values: a cache each, or the slots of one cache (as the server does). */
type CacheKind = 'own' | 'slots';

/**
 * Seconds of `steps` batched greedy decode steps of `streams` sequences, each after its own prompt, with their
 * caches of `kind`.
 */
async function decodeSeconds(
  model: TransformerLM,
  streams: number,
  steps: number,
  kind: CacheKind,
): Promise<number> {
  const { vocabSize } = model.config;
  const capacity = PROMPT_TOKENS + steps;
  const backend = model.backend;
  const shared =
    kind === 'slots' ? SlotKVCache.forModel(model.config, { slots: streams, capacity, backend }) : undefined;
  const caches = Array.from({ length: streams }, () =>
    shared ? shared.acquire() : KVCache.forModel(model.config, { capacity, backend }),
  );
  // Different prompts, so the sequences differ: token ids spread over the vocabulary.
  let tokens = caches.map((_, s) =>
    Array.from({ length: PROMPT_TOKENS }, (_, i) => (1 + (s * 31 + i) * 7919) % vocabSize),
  );
  let offset = 0;
  const run = async () => {
    const logits = forwardBatch(
      model,
      caches.map((cache, s) => ({ tokens: tokens[s], offset, cache })),
    ); // [streams, vocab]
    // As the server does for greedy requests: each row's argmax and its sum (its check for NaN) on the device.
    const { ids, sums } = await deviceArgmax(logits);
    logits.dispose();
    offset += tokens[0].length;
    tokens = caches.map((_, s) => {
      checkLogitSum(sums[s], 'bench serve');
      return [ids[s]];
    });
  };
  await run(); // the prefill, not timed
  const start = performance.now();
  for (let step = 1; step < steps; step++) await run();
  const seconds = (performance.now() - start) / 1000;
  for (const cache of caches) {
    if (cache instanceof KVCache) cache.dispose();
    else cache.release();
  }
  shared?.dispose();
  return seconds;
}

/**
 * Weights a decode step reads in full, whatever the number of streams: every matrix, the input embedding only when it
 * is also the output projection (an untied one gives one row per token).
 */
function streamedWeights(model: TransformerLM): number {
  const embedding = model.tokEmbeddings.weight;
  return model
    .parameters()
    .filter((p) => p.rank === 2 && (model.config.tiedEmbeddings || p !== embedding))
    .reduce((n, p) => n + p.size, 0);
}

/** The backend of that name; the CPU one on `threads` threads (its default when undefined). */
async function createBackend(name: SuiteOptions['backend'], threads: number | undefined): Promise<Backend> {
  if (name === 'cpu') return new CpuBackend({ threads });
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  return requireNodeWebGPU();
}

/** The models measured: stories260K when the shared data has it, and a randomly initialised stories15M shape. */
function targets(notes: string[]): { name: string; build: () => TransformerLM }[] {
  const list: { name: string; build: () => TransformerLM }[] = [];
  const stories = sharedDataFile('models/stories260K.bin');
  if (stories === undefined)
    notes.push('stories260K skipped: ../shared/data/models/stories260K.bin is not there.');
  else
    list.push({ name: 'stories260K', build: () => transformerFromTensors(loadModelFile(stories), stories) });
  list.push({ name: 'stories15M shape', build: () => new TransformerLM(stories15MShape()).eval() });
  return list;
}

export const serveSuite: Suite = {
  name: 'serve',
  description: 'continuous batching: aggregate decode tokens/s of 1 to 16 streams sharing each forward pass',
  flags: {
    tokens: { type: 'string' },
    threads: { type: 'string', short: 't' },
  },
  usage: '[--tokens N] [--threads N]',
  async run(options): Promise<SuiteResult> {
    const steps = integerFlag(options.values, 'tokens', 2) ?? 64;
    const threads = integerFlag(options.values, 'threads', 1);
    const backend = await createBackend(options.backend, threads);
    setBackend(backend);
    const notes: string[] = [];
    const rows: Row[] = [];
    for (const target of targets(notes)) {
      const model = target.build();
      // One untimed pass of every configuration first: with 8 warm-up steps, the JIT was still compiling during the
      // 1-stream rounds, measured first (stories260K: 1 000 tok/s against 2 300 once warm), which inflated every ratio.
      for (const streams of STREAMS) {
        for (const kind of ['slots', 'own'] as const) await decodeSeconds(model, streams, steps, kind);
      }
      const weights = streamedWeights(model);
      let single = 0;
      for (const streams of STREAMS) {
        // Rounds alternate the two cache kinds, so both see the same load.
        const times: Record<CacheKind, number[]> = { own: [], slots: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const kind of ['slots', 'own'] as const)
            times[kind].push(await decodeSeconds(model, streams, steps, kind));
        }
        const rate = (streams * (steps - 1)) / median(times.slots);
        const own = (streams * (steps - 1)) / median(times.own);
        if (streams === 1) single = rate;
        rows.push({
          model: target.name,
          streams,
          'decode tok/s': rate,
          'vs 1 stream (x)': rate / single,
          'own caches tok/s': own,
          // Each token multiplies by every streamed weight (a multiply and an add); each step reads them once.
          'matrix GFLOP/s': (2 * weights * rate) / 1e9,
          'weights GB/s': (4 * weights * rate) / streams / 1e9,
        });
      }
      model.dispose();
    }
    notes.push(
      `${steps - 1} decode steps after a ${PROMPT_TOKENS}-token prompt per stream, one forwardBatch pass per step ` +
        'over all streams, greedy (the argmax and sum of each row taken on the device, as the server does for greedy requests), the streams in the slots of one SlotKVCache as the server keeps them (one attention ' +
        `call per layer); "own caches": a KVCache per stream (attention per stream). Median of ${ROUNDS} rounds; Loom on ${backendLabel(backend, options.backend)}.`,
      'matrix GFLOP/s: 2 x the streamed weights (the matrices; the embedding when tied) x tokens/s, attention left out; ' +
        'weights GB/s: their f32 bytes x steps/s, the bytes every step reads once however many streams share it. ' +
        'One stream is bound by the second (memory), many streams by the first (arithmetic).',
    );
    return { title: `serve: batched decode on ${options.backend}`, rows, notes };
  },
};
