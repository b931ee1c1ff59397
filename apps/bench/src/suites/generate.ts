import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { makeConfig, type TransformerConfig, TransformerLM } from '@loom/nn';
import { InferenceSession, TokenChooser } from '@loom/runtime';
import { type Backend, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { sharedDataFile } from '../shared-data';
import { median } from '../stats';
import type { Row, Suite, SuiteOptions, SuiteResult } from '../suite';

/** stories15M's shape (llama2.c): dim 288, hidden 768, 6 layers of 6 heads, vocab 32000. */
function stories15MShape(maxSeqLen: number): TransformerConfig {
  return makeConfig('llama', {
    vocabSize: 32000,
    dim: 288,
    hiddenDim: 768,
    numLayers: 6,
    numHeads: 6,
    maxSeqLen,
    tiedEmbeddings: true,
  });
}

/** Prompt tokens of the prefill runs. */
const PREFILL_TOKENS = 128;
const RUNS = 3;
/** Decode steps run before timing, so the JIT and the buffer pools are warm. */
const WARM_UP_STEPS = 16;

/** Deterministic token ids in [0, vocab). */
function tokenIds(count: number, vocab: number): number[] {
  return Array.from({ length: count }, (_, i) => (1 + i * 7919) % vocab);
}

/** Prefill tokens per second: one forward pass over the prompt, then the greedy token read back. */
async function prefillRate(model: TransformerLM, chooser: TokenChooser): Promise<number> {
  const prompt = tokenIds(Math.min(PREFILL_TOKENS, model.config.maxSeqLen), model.config.vocabSize);
  const times: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const session = new InferenceSession(model);
    const start = performance.now();
    const logits = session.feed(prompt);
    await chooser.choose(logits);
    const ms = performance.now() - start;
    logits.dispose();
    session.dispose();
    if (run > 0) times.push(ms);
  }
  return (prompt.length * 1000) / median(times);
}

/** Milliseconds of `steps` greedy tokens from one start token, each step reading only the cache. */
async function cachedDecodeMs(model: TransformerLM, chooser: TokenChooser, steps: number): Promise<number> {
  const session = new InferenceSession(model);
  let token = 1;
  const start = performance.now();
  for (let step = 0; step < steps; step++) {
    const logits = session.feed([token]);
    token = (await chooser.choose(logits)).token;
    logits.dispose();
  }
  const ms = performance.now() - start;
  session.dispose();
  return ms;
}

/** The logits after the last of `tokens` from a forward pass over all of them, with no cache. */
function recomputedLogits(model: TransformerLM, tokens: readonly number[]): Tensor {
  const { dim, vocabSize } = model.config;
  return scope(() => {
    const ids = tensor(Int32Array.from(tokens), [1, tokens.length], { backend: model.backend }); // [1, T]
    const hidden = model.hidden(ids); // [1, T, dim]
    const last = hidden.slice([0, tokens.length - 1, 0], [1, 1, dim]); // [1, 1, dim]
    return model.project(last).reshape([vocabSize]); // [vocab]
  });
}

/**
 * Milliseconds of `steps` greedy tokens recomputing the whole context at each step. With `stride` > 1 the steps
 * are cut into blocks of `stride` and only the middle step of each block is run, counted for the whole block: an
 * estimate of the total (midpoint rule).
 */
async function recomputeDecodeMs(
  model: TransformerLM,
  chooser: TokenChooser,
  steps: number,
  stride: number,
): Promise<number> {
  const context = tokenIds(steps, model.config.vocabSize);
  let total = 0;
  for (let first = 1; first <= steps; first += stride) {
    const count = Math.min(stride, steps - first + 1);
    const length = first + Math.floor(count / 2);
    const start = performance.now();
    const logits = recomputedLogits(model, context.slice(0, length));
    await chooser.choose(logits);
    total += (performance.now() - start) * count;
    logits.dispose();
  }
  return total;
}

interface Target {
  readonly name: string;
  readonly build: () => TransformerLM;
}

function targets(notes: string[]): Target[] {
  const list: Target[] = [];
  const stories = sharedDataFile('models/stories260K.bin');
  if (stories === undefined)
    notes.push('stories260K skipped: ../shared/data/models/stories260K.bin is not there.');
  else
    list.push({ name: 'stories260K', build: () => transformerFromTensors(loadModelFile(stories), stories) });
  list.push({ name: 'stories15M shape', build: () => new TransformerLM(stories15MShape(256)).eval() });
  return list;
}

async function createBackend(name: SuiteOptions['backend']): Promise<Backend> {
  if (name === 'cpu') return new CpuBackend();
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  return requireNodeWebGPU();
}

/** Full recomputes run per measurement unless `--recompute-samples N` says otherwise (0: run every step). */
const RECOMPUTE_SAMPLES = 40;

function recomputeSamples(options: SuiteOptions): number {
  const i = options.args.indexOf('--recompute-samples');
  if (i < 0) return RECOMPUTE_SAMPLES;
  const samples = Number(options.args[i + 1]);
  if (!Number.isInteger(samples) || samples < 0) {
    throw new Error(
      `--recompute-samples: expected an integer ≥ 0 (0 runs every step), got ${JSON.stringify(options.args[i + 1])}`,
    );
  }
  return samples;
}

export const generateSuite: Suite = {
  name: 'generate',
  description: 'prefill and decode tokens/s (stories260K, stories15M shape); KV cache against full recompute',
  async run(options): Promise<SuiteResult> {
    const backend = await createBackend(options.backend);
    setBackend(backend);
    const chooser = new TokenChooser({ temperature: 0 });
    const notes: string[] = [];
    const rows: Row[] = [];
    for (const target of targets(notes)) {
      const model = target.build();
      const steps = model.config.maxSeqLen >= 256 ? 255 : model.config.maxSeqLen - 1;
      await cachedDecodeMs(model, chooser, WARM_UP_STEPS);
      const decodeMs = await cachedDecodeMs(model, chooser, steps);
      rows.push({
        model: target.name,
        measure: `prefill ${PREFILL_TOKENS} tokens (tok/s)`,
        value: await prefillRate(model, chooser),
      });
      rows.push({
        model: target.name,
        measure: `decode ${steps} tokens (tok/s)`,
        value: (steps * 1000) / decodeMs,
      });
      model.dispose();
    }
    const samples = recomputeSamples(options);
    const long = new TransformerLM(stories15MShape(1024)).eval();
    await cachedDecodeMs(long, chooser, WARM_UP_STEPS);
    for (const steps of [256, 1000]) {
      const stride = samples === 0 ? 1 : Math.ceil(steps / samples);
      const cached = await cachedDecodeMs(long, chooser, steps);
      const recompute = await recomputeDecodeMs(long, chooser, steps, stride);
      const name = 'stories15M shape, 1024 positions';
      rows.push({ model: name, measure: `${steps} tokens with the KV cache (s)`, value: cached / 1000 });
      rows.push({
        model: name,
        measure: `${steps} tokens recomputing the context (s)`,
        value: recompute / 1000,
      });
      rows.push({
        model: name,
        measure: `KV cache speed-up at ${steps} tokens (x)`,
        value: recompute / cached,
      });
      if (stride > 1) {
        notes.push(
          `full recompute of ${steps} tokens: the middle step of every ${stride} run and counted ${stride} times.`,
        );
      }
    }
    long.dispose();
    notes.push('greedy decoding with the argmax on the device; weights are random except for stories260K.');
    return { title: `text generation on ${options.backend}`, rows, notes };
  },
};
