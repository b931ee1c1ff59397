import { loadavg } from 'node:os';
import { basename } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import { loadModelFile, transformerFromTensors, type WeightsMode } from '@loom/models';
import { TransformerLM } from '@loom/nn';
import { InferenceSession, TokenChooser } from '@loom/runtime';
import { type Backend, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { backendLabel } from '../backend-label';
import { browserGenerate } from '../browser/browser-generate';
import { booleanFlag, type FlagValues, integerFlag, stringFlag, UsageError } from '../flags';
import { MemoryReadProbe } from '../memory-read';
import { stories15MShape } from '../model-shapes';
import { llama2cRate } from '../peers/llama2c';
import { llamaCppRate } from '../peers/llamacpp';
import { sharedDataFile } from '../shared-data';
import { median } from '../stats';
import type { Row, Suite, SuiteOptions, SuiteResult } from '../suite';
import { decodeStepCounts, meanCount, mostCount, type StepCounts } from './decode-counts';
import { quantizedDecodeRows, quantizedShapes } from './quantized-decode';

/** Prompt tokens of the prefill runs. */
const PREFILL_TOKENS = 128;
const RUNS = 3;
/** Decode steps run before timing, so the JIT and the buffer pools are warm. */
const WARM_UP_STEPS = 16;

/** A load average triple as "1.23 0.98 0.75": how busy the machine was, to judge how noisy the figures are. */
function showLoad(load: readonly number[]): string {
  return load.map((l) => l.toFixed(2)).join(' ');
}

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
  const { vocabSize } = model.config;
  return scope(() => {
    const ids = tensor(Int32Array.from(tokens), [1, tokens.length], { backend: model.backend }); // [1, T]
    return model.project(model.hiddenLast(ids)).reshape([vocabSize]); // [1, 1, dim] -> [vocab]
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
  /** Reads what the model needs (a file's tensors, once) and gives the function that builds it on the current backend. */
  readonly open: () => () => TransformerLM;
}

/** A model file's target: its tensors read once, however many backends it is built on. */
function fileTarget(name: string, path: string, weights: WeightsMode = 'f32'): Target {
  return {
    name,
    open: () => {
      const loaded = loadModelFile(path, { weights });
      return () => transformerFromTensors(loaded, path);
    },
  };
}

function defaultTargets(notes: string[]): Target[] {
  const list: Target[] = [];
  const stories = sharedDataFile('models/stories260K.bin');
  if (stories === undefined)
    notes.push('stories260K skipped: ../shared/data/models/stories260K.bin is not there.');
  else list.push(fileTarget('stories260K', stories));
  list.push({ name: 'stories15M shape', open: () => () => new TransformerLM(stories15MShape(256)).eval() });
  return list;
}

/** A backend measured, and the threads its kernels run on (1 for WebGPU). */
interface ThreadedBackend {
  readonly backend: Backend;
  readonly threads: number;
}

/** The backend of that name; the CPU one on `threads` threads (its default when undefined), started. */
async function createBackend(
  name: SuiteOptions['backend'],
  threads: number | undefined,
): Promise<ThreadedBackend> {
  if (name === 'cpu') {
    const backend = new CpuBackend({ threads });
    return { backend, threads: await backend.threadsReady() };
  }
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  return { backend: await requireNodeWebGPU(), threads: 1 };
}

/**
 * The thread counts of `--threads`: one, or a comma list (1,2) measured in the same rounds, so their ratio is of one
 * window; [undefined] (the backend's default) when absent.
 */
function threadCounts(values: FlagValues, backend: SuiteOptions['backend']): (number | undefined)[] {
  const text = stringFlag(values, 'threads');
  if (text === undefined) return [undefined];
  const counts = text.split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1) || new Set(counts).size !== counts.length) {
    throw new UsageError(
      `--threads: expected a thread count ≥ 1 or a comma list of different ones (1,2), got ${JSON.stringify(text)}`,
    );
  }
  if (counts.length > 1 && backend !== 'cpu') {
    throw new UsageError(`--threads ${text}: a list of thread counts is for the cpu backend`);
  }
  return counts;
}

/** Decode steps of each quantized-format measurement unless `--tokens N` says otherwise. */
const QUANTIZED_STEPS = 64;

/** `--weights`: how a `--model` GGUF's Q8_0 / Q4_0 / Q4_K / Q6_K and F16 / BF16 linear weights are held (see WeightsMode). */
function weightsFlag(flag: string | undefined): WeightsMode {
  if (flag === undefined || flag === 'f32' || flag === 'quantized') return flag ?? 'f32';
  throw new UsageError(`--weights ${flag}: expected f32 or quantized`);
}

/** Full recomputes run per measurement unless `--recompute-samples N` says otherwise (0: run every step). */
const RECOMPUTE_SAMPLES = 40;

/** Loom's figures and the peers' for one model, one list entry per round. */
interface Rates {
  readonly loomPrefill: number[];
  readonly loomDecode: number[];
  /** CPU milliseconds per decoded token, every thread of the process counted. */
  readonly loomDecodeCpu: number[];
  readonly llamaCppDecode: number[];
  readonly llamaCppPrefill: number[];
  readonly llama2cDecode: number[];
  /** GB/s of the memory read probe on the same number of threads (none on WebGPU). */
  readonly memoryRead: number[];
}

function emptyRates(): Rates {
  return {
    loomPrefill: [],
    loomDecode: [],
    loomDecodeCpu: [],
    llamaCppDecode: [],
    llamaCppPrefill: [],
    llama2cDecode: [],
    memoryRead: [],
  };
}

/** One thread count's measurements of a target: its backend, the model built on it, and each round's figures. */
interface ThreadRun extends ThreadedBackend {
  readonly model: TransformerLM;
  readonly rates: Rates;
}

/**
 * `target` built on each backend in turn, its file read once, and what its first build took (the read included):
 * milliseconds, and the process's peak memory then (a second copy of the weights is not what loading costs).
 */
function buildRuns(
  target: Target,
  backends: readonly ThreadedBackend[],
): { runs: ThreadRun[]; built: { ms: number; peakBytes: number } } {
  const started = performance.now();
  const build = target.open();
  const runs: ThreadRun[] = [];
  let built = { ms: 0, peakBytes: 0 };
  for (const b of backends) {
    setBackend(b.backend);
    runs.push({ ...b, model: build(), rates: emptyRates() });
    if (runs.length === 1)
      built = { ms: performance.now() - started, peakBytes: process.resourceUsage().maxRSS * 1024 }; // KiB
  }
  return { runs, built };
}

/** The peers to run on a `--model`, from the flags; each needs its own copy of the same weights. */
interface Peers {
  readonly llamaCpp?: { readonly from: string; readonly gguf: string };
  readonly llama2c?: { readonly binary: string; readonly tokenizer: string };
}

function peersFrom(values: FlagValues, model: string | undefined): Peers {
  const from = stringFlag(values, 'llama-cpp');
  const gguf = stringFlag(values, 'gguf');
  const binary = stringFlag(values, 'llama2c');
  const tokenizer = stringFlag(values, 'llama2c-tokenizer');
  if ((from !== undefined || binary !== undefined) && model === undefined) {
    throw new UsageError(
      '--llama-cpp and --llama2c need --model PATH: the peers must run the same weights as Loom',
    );
  }
  if ((from === undefined) !== (gguf === undefined)) {
    throw new UsageError(
      '--llama-cpp DIR and --gguf PATH go together (the same weights as --model, in GGUF)',
    );
  }
  if ((binary === undefined) !== (tokenizer === undefined)) {
    throw new UsageError('--llama2c BIN and --llama2c-tokenizer PATH go together');
  }
  return {
    ...(from !== undefined && gguf !== undefined ? { llamaCpp: { from, gguf } } : {}),
    ...(binary !== undefined && tokenizer !== undefined ? { llama2c: { binary, tokenizer } } : {}),
  };
}

/** Loom's KV cache against recomputing the whole context, on a 1024-position stories15M shape. */
async function cacheRows(chooser: TokenChooser, samples: number, notes: string[]): Promise<Row[]> {
  const rows: Row[] = [];
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
  return rows;
}

/** Decode steps whose device counters are reported, after WARM_UP_STEPS of warm-up. */
const COUNTED_STEPS = 8;

/** Per-token device counts of steady-state decode on WebGPU: means over COUNTED_STEPS steps, allocations at most. */
function countRows(name: string, steps: readonly StepCounts[], model: TransformerLM): Row[] {
  const mean = (key: keyof StepCounts): number => meanCount(steps, key);
  const read = mean('inputBytes');
  return [
    { model: name, measure: 'webgpu dispatches per token', value: mean('dispatches') },
    { model: name, measure: 'webgpu copies per token', value: mean('copies') },
    { model: name, measure: 'webgpu command buffers per token', value: mean('submits') },
    {
      model: name,
      measure: 'webgpu buffers created per token (most in a step)',
      value: mostCount(steps, 'buffersCreated'),
    },
    { model: name, measure: 'webgpu param uploads per token', value: mean('paramUploads') },
    { model: name, measure: 'webgpu param bytes per token', value: mean('paramBytes') },
    { model: name, measure: 'webgpu tensor uploads per token', value: mean('uploads') },
    { model: name, measure: 'webgpu bytes read back per token', value: mean('bytesRead') },
    { model: name, measure: 'webgpu bytes read per token (MB, bound inputs)', value: read / 1e6 },
    { model: name, measure: 'webgpu weights (MB)', value: model.weightBytes / 1e6 },
    { model: name, measure: 'webgpu weights a step reads (MB)', value: model.stepWeightBytes / 1e6 },
    {
      model: name,
      measure: 'webgpu bytes read / weights a step reads (x)',
      value: read / model.stepWeightBytes,
    },
  ];
}

/** `stepBytes`: the weights a decode step reads, whose rate at Loom's decode speed is set against the probe's. */
function rateRows(name: string, steps: number, rates: Rates, stepBytes: number): Row[] {
  const rows: Row[] = [
    {
      model: name,
      measure: `Loom prefill ${PREFILL_TOKENS} tokens (tok/s)`,
      value: median(rates.loomPrefill),
    },
    { model: name, measure: `Loom decode ${steps} tokens (tok/s)`, value: median(rates.loomDecode) },
    {
      model: name,
      measure: 'Loom decode CPU time per token (ms, all threads)',
      value: median(rates.loomDecodeCpu),
    },
  ];
  const loomDecode = median(rates.loomDecode);
  const weightReads = (loomDecode * stepBytes) / 1e9;
  rows.push({ model: name, measure: 'Loom decode weight reads (GB/s)', value: weightReads });
  if (rates.memoryRead.length > 0) {
    const probe = median(rates.memoryRead);
    rows.push({ model: name, measure: 'memory read probe, same threads (GB/s)', value: probe });
    rows.push({ model: name, measure: 'Loom decode weight reads / probe (x)', value: weightReads / probe });
  }
  if (rates.llamaCppDecode.length > 0) {
    const decode = median(rates.llamaCppDecode);
    rows.push({ model: name, measure: `llama.cpp decode ${steps} tokens (tok/s)`, value: decode });
    rows.push({ model: name, measure: 'Loom / llama.cpp decode (x)', value: loomDecode / decode });
  }
  if (rates.llamaCppPrefill.length > 0) {
    const prefill = median(rates.llamaCppPrefill);
    rows.push({ model: name, measure: `llama.cpp prefill ${PREFILL_TOKENS} tokens (tok/s)`, value: prefill });
    rows.push({
      model: name,
      measure: 'Loom / llama.cpp prefill (x)',
      value: median(rates.loomPrefill) / prefill,
    });
  }
  if (rates.llama2cDecode.length > 0) {
    const decode = median(rates.llama2cDecode);
    rows.push({ model: name, measure: `llama2.c decode ${steps} tokens (tok/s)`, value: decode });
    rows.push({ model: name, measure: 'Loom / llama2.c decode (x)', value: loomDecode / decode });
  }
  return rows;
}

/**
 * With several thread counts: each one's decode tokens/s and probe GB/s over the first count's, from the same rounds,
 * so what more threads bring to decode can be set against what they bring to reading memory.
 */
function scalingRows(runs: readonly ThreadRun[], name: (run: ThreadRun) => string): Row[] {
  const [first, ...others] = runs;
  const rows: Row[] = [];
  for (const run of others) {
    const over = `/ ${first.threads} thread${first.threads === 1 ? '' : 's'} (x)`;
    rows.push({
      model: name(run),
      measure: `Loom decode ${over}`,
      value: median(run.rates.loomDecode) / median(first.rates.loomDecode),
    });
    if (run.rates.memoryRead.length > 0) {
      rows.push({
        model: name(run),
        measure: `memory read probe ${over}`,
        value: median(run.rates.memoryRead) / median(first.rates.memoryRead),
      });
    }
  }
  return rows;
}

/**
 * What loading a `--model` file took, once (the file read, widened or kept as blocks with `--weights`, and the model
 * built on the backend): seconds, and the process's peak resident memory at its end.
 */
function loadRows(name: string, ms: number, peakBytes: number): Row[] {
  return [
    { model: name, measure: 'Loom load and build, once (s)', value: ms / 1000 },
    { model: name, measure: 'process peak memory after the build (GiB)', value: peakBytes / 2 ** 30 },
  ];
}

export const generateSuite: Suite = {
  name: 'generate',
  description:
    'prefill and decode tokens/s (stories260K, stories15M shape, or --model PATH of any shape); KV cache against full recompute; peers interleaved',
  flags: {
    model: { type: 'string', short: 'm' },
    threads: { type: 'string', short: 't' },
    tokens: { type: 'string', short: 'n' },
    rounds: { type: 'string' },
    'llama-cpp': { type: 'string' },
    gguf: { type: 'string' },
    llama2c: { type: 'string' },
    'llama2c-tokenizer': { type: 'string' },
    'recompute-samples': { type: 'string' },
    quantized: { type: 'string' },
    weights: { type: 'string' },
    browser: { type: 'boolean' },
    'browser-backend': { type: 'string' },
  },
  usage:
    '[--model PATH] [--threads N|1,2] [--tokens N] [--rounds N] [--llama-cpp DIR --gguf PATH] [--llama2c BIN --llama2c-tokenizer PATH] [--recompute-samples N] [--quantized 15M,110M|none] [--weights f32|quantized] [--browser [--browser-backend cpu|webgpu|webgpu-swiftshader]]',
  async run(options): Promise<SuiteResult> {
    const { values } = options;
    if (booleanFlag(values, 'browser')) return browserGenerate(values, options.backend);
    const modelPath = stringFlag(values, 'model');
    const counts = threadCounts(values, options.backend);
    const peers = peersFrom(values, modelPath);
    const samples = integerFlag(values, 'recompute-samples', 0) ?? RECOMPUTE_SAMPLES;
    const withPeers = peers.llamaCpp !== undefined || peers.llama2c !== undefined;
    const rounds = integerFlag(values, 'rounds', 1) ?? (withPeers ? 3 : 1);
    const weights = weightsFlag(stringFlag(values, 'weights'));
    const shapes =
      modelPath === undefined && options.backend === 'cpu'
        ? quantizedShapes(stringFlag(values, 'quantized'))
        : [];
    const backends: ThreadedBackend[] = [];
    for (const threads of counts) backends.push(await createBackend(options.backend, threads));
    const backend = backends[0].backend;
    setBackend(backend);
    const chooser = new TokenChooser({ temperature: 0 });
    const notes: string[] = [];
    const loadAtStart = loadavg();
    const targets: Target[] =
      modelPath === undefined ? defaultTargets(notes) : [fileTarget(basename(modelPath), modelPath, weights)];
    // Made after the first target is built, so that the peak memory of loading leaves out its buffer.
    let probe: MemoryReadProbe | undefined;
    const label = (name: string, threads: number) =>
      backends.length === 1 ? name : `${name}, ${threads} thread${threads === 1 ? '' : 's'}`;
    const rows: Row[] = [];
    try {
      for (const target of targets) {
        const { runs, built } = buildRuns(target, backends);
        if (options.backend === 'cpu')
          probe ??= MemoryReadProbe.create(Math.max(...backends.map((b) => b.threads)));
        const { maxSeqLen } = runs[0].model.config;
        const steps = integerFlag(values, 'tokens', 1) ?? Math.min(255, maxSeqLen - 1);
        if (steps >= maxSeqLen) {
          throw new UsageError(`--tokens ${steps}: ${target.name} has ${maxSeqLen} positions`);
        }
        for (const run of runs) {
          setBackend(run.backend);
          await cachedDecodeMs(run.model, chooser, WARM_UP_STEPS);
        }
        // A B A B: each round runs Loom, then every peer, on each thread count in turn, then the probe: one window.
        for (let round = 0; round < rounds; round++) {
          for (const { backend, model, rates, threads } of runs) {
            setBackend(backend);
            const cpuBefore = process.cpuUsage();
            rates.loomDecode.push((steps * 1000) / (await cachedDecodeMs(model, chooser, steps)));
            const cpu = process.cpuUsage(cpuBefore);
            rates.loomDecodeCpu.push((cpu.user + cpu.system) / 1000 / steps);
            rates.loomPrefill.push(await prefillRate(model, chooser));
            if (peers.llamaCpp) {
              const { from, gguf } = peers.llamaCpp;
              const rate = await llamaCppRate(from, gguf, threads, steps, PREFILL_TOKENS);
              rates.llamaCppDecode.push(rate.decodeTokensPerS);
              if (rate.prefillTokensPerS !== undefined) rates.llamaCppPrefill.push(rate.prefillTokensPerS);
            }
            if (peers.llama2c && modelPath !== undefined) {
              const { binary, tokenizer } = peers.llama2c;
              rates.llama2cDecode.push(await llama2cRate(binary, modelPath, tokenizer, steps, threads));
            }
          }
          if (probe) for (const run of runs) run.rates.memoryRead.push(await probe.gbPerSecond(run.threads));
        }
        for (const run of runs) {
          rows.push(
            ...rateRows(label(target.name, run.threads), steps, run.rates, run.model.stepWeightBytes),
          );
        }
        rows.push(...scalingRows(runs, (run) => label(target.name, run.threads)));
        if (modelPath !== undefined) rows.push(...loadRows(target.name, built.ms, built.peakBytes));
        const [first] = runs;
        if (first.backend instanceof WebGPUBackend && maxSeqLen > WARM_UP_STEPS + COUNTED_STEPS) {
          const counted = await decodeStepCounts(
            first.model,
            first.backend,
            chooser,
            WARM_UP_STEPS,
            COUNTED_STEPS,
          );
          rows.push(...countRows(target.name, counted, first.model));
        }
        for (const run of runs) run.model.dispose();
      }
    } finally {
      await probe?.close();
    }
    setBackend(backend);
    if (modelPath === undefined) rows.push(...(await cacheRows(chooser, samples, notes)));
    if (shapes.length > 0) {
      const quantized = {
        shapes,
        threads: [1, 2],
        steps: integerFlag(values, 'tokens', 1) ?? QUANTIZED_STEPS,
        rounds: integerFlag(values, 'rounds', 1) ?? 3,
        decodeMs: (model: TransformerLM, steps: number) => cachedDecodeMs(model, chooser, steps),
      };
      rows.push(...(await quantizedDecodeRows(quantized, backend)));
      notes.push(
        `quantized rows: random models, linear layers in f32, Q8_0, Q4_0, Q4_K (quantized in process; Q4_0 where a layer's input is not a multiple of 256) and BF16 (rounded in process), measured in turn each of ${quantized.rounds} round(s), median; --quantized none skips them.`,
      );
    }
    const on =
      backends.length === 1
        ? backendLabel(backend, options.backend)
        : `${counts.join(', ')} CPU threads in turn`;
    notes.push(`median of ${rounds} round(s); Loom on ${on}.`);
    if (options.backend === 'cpu') {
      notes.push(
        'memory read probe: a WebAssembly SIMD loop of its own (not a Loom kernel) reading a 256 MiB buffer on as many threads, run after Loom and the peers in each round: the ceiling of decode, which reads every weight once per token; weight reads = the bytes of weights a decode step reads x tokens/s.',
      );
    }
    if (withPeers) notes.push('peers ran after Loom in every round, on the same weights and thread count.');
    notes.push(
      'Loom CPU time per token counts the process while it decodes, not while it waits for a core: a busy machine moves it less than tokens/s.',
    );
    notes.push(
      `load average (1, 5, 15 min): ${showLoad(loadAtStart)} at the start, ${showLoad(loadavg())} at the end.`,
    );
    notes.push(
      'greedy decoding with the argmax on the device; weights are random except for trained checkpoints.',
    );
    if (backend instanceof WebGPUBackend) {
      const { subgroups, shaderF16, software } = backend.features;
      const matvec = software
        ? 'CPU rasteriser: matvec runs a thread per row'
        : `matvec runs a workgroup per row${subgroups ? ' with subgroup sums' : ''}`;
      notes.push(
        `webgpu counts: decode steps ${WARM_UP_STEPS + 1}..${WARM_UP_STEPS + COUNTED_STEPS} of a fresh session; ` +
          'bytes read per token add up the storage each dispatch binds as input (attention: the visible keys ' +
          'and values only; the embedding gather: the rows it picks), an upper bound. ' +
          `Device: ${matvec}; subgroups ${subgroups ? 'present' : 'absent'}, shader-f16 ${shaderF16 ? 'present (unused)' : 'absent'}.`,
      );
    }
    return { title: `text generation on ${options.backend}`, rows, notes };
  },
};
