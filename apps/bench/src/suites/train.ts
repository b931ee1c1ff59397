import { readFileSync } from 'node:fs';
import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import {
  AdamW,
  makeConfig,
  type Preset,
  parameterCount,
  readClipFactor,
  TransformerLM,
  warmupCosine,
} from '@loom/nn';
import { type Backend, setBackend, type Tensor, tensor, uniformAt } from '@loom/tensor';
import { CharTokenizer } from '@loom/tokenizer';
import { booleanFlag, integerFlag, UsageError } from '../flags';
import { torchTrainMs } from '../peers/torch-train';
import { sharedDataFile } from '../shared-data';
import { median } from '../stats';
import type { Row, Suite, SuiteOptions, SuiteResult } from '../suite';
import { difference, meanCount, mostCount, type StepCounts } from './decode-counts';

/** The reference setup: char-level TinyShakespeare, 4 layers, 4 heads, dim 128, block 64, batch 12. */
const REFERENCE = { layers: 4, heads: 4, dim: 128, block: 64, batch: 12 } as const;
/**
 * Steps before the timed ones. A training run lasts thousands of steps, so the figure is the steady state: V8 kept
 * compiling the step's JavaScript (TurboFan, on its background threads, which then share the two cores with the
 * kernels) for ~50 steps: after 10 steps those threads took 22 of every ~430 CPU ticks of the next 30 steps, after
 * 60 steps 0-2, and the first preset of a run (gpt2, which warms the shared code for llama) timed 66.3 ms/iteration
 * after 10 steps against 60.0-60.9 after 60 (llama 59.1-61.3 against 58.3-59.9). PyTorch's figure skips its first 10
 * of 50 steps; it compiles nothing.
 */
const WARM_UP = 50;
const TIMED = 30;

async function createBackend(name: SuiteOptions['backend']): Promise<Backend> {
  if (name === 'cpu') return new CpuBackend();
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  return requireNodeWebGPU();
}

/** The first 90% of TinyShakespeare as character ids, and the vocabulary size. */
function trainingTokens(): { tokens: Int32Array; vocabSize: number } {
  const path = sharedDataFile('tinyshakespeare.txt');
  if (path === undefined) {
    throw new Error(
      'bench train: tinyshakespeare.txt not found; put the shared data folder at ../shared/data beside the repository',
    );
  }
  const text = readFileSync(path, 'utf8');
  const tokenizer = CharTokenizer.fromCorpus(text);
  return {
    tokens: Int32Array.from(tokenizer.encode(text.slice(0, Math.floor(text.length * 0.9)))),
    vocabSize: tokenizer.vocabSize,
  };
}

/** Batch `step`: `batch` random windows of block + 1 tokens, inputs and next-token targets. */
function batchAt(tokens: Int32Array, step: number): { inputs: Tensor; targets: Tensor } {
  const { batch, block } = REFERENCE;
  const inputs = new Int32Array(batch * block);
  const targets = new Int32Array(batch * block);
  for (let row = 0; row < batch; row++) {
    const start = Math.floor(uniformAt(step, row) * (tokens.length - block - 1));
    inputs.set(tokens.subarray(start, start + block), row * block);
    targets.set(tokens.subarray(start + 1, start + block + 1), row * block);
  }
  const shape = [batch, block];
  return {
    inputs: tensor(inputs, shape, { dtype: 'i32' }),
    targets: tensor(targets, shape, { dtype: 'i32' }),
  };
}

interface StepTimes {
  /** Forward and backward pass, loss read back. */
  readonly gradMs: number;
  /** Gradient clipping and the AdamW update, finished. */
  readonly updateMs: number;
  readonly loss: number;
  /** What the step asked of a WebGPU device (counter differences), on that backend. */
  readonly counts?: StepCounts;
}

/** Median timings of the reference training step for one preset, after a warm-up. */
async function timeTraining(preset: Preset, backendName: SuiteOptions['backend']): Promise<Timing> {
  const { tokens, vocabSize } = trainingTokens();
  const inner = await createBackend(backendName);
  const gpu = inner instanceof WebGPUBackend ? inner : undefined;
  setBackend(new AutodiffBackend(inner));
  const { layers, heads, dim, block } = REFERENCE;
  const config = makeConfig(preset, { vocabSize, dim, numLayers: layers, numHeads: heads, maxSeqLen: block });
  const model = new TransformerLM(config, { seed: 1337 });
  const params = model.parameters();
  const optimizer = new AdamW({ beta1: 0.9, beta2: 0.99, weightDecay: 0.1 });
  const lr = warmupCosine({ maxLr: 1e-3, minLr: 1e-4, warmup: 100, decaySteps: 2000 });
  const steps: StepTimes[] = [];
  for (let step = 0; step < WARM_UP + TIMED; step++) {
    const { inputs, targets } = batchAt(tokens, step);
    const before = gpu?.stats();
    const start = performance.now();
    const { value, grads } = valueAndGrad(() => model.loss(inputs, targets), params);
    const loss = await value.item();
    const graded = performance.now();
    optimizer.step(params, grads, lr(step), await readClipFactor(grads, 1));
    await params[params.length - 1].data();
    const done = performance.now();
    for (const t of [inputs, targets, value, ...grads]) t.dispose();
    const counts = gpu && before ? difference(gpu.stats(), before) : undefined;
    if (step >= WARM_UP) steps.push({ gradMs: graded - start, updateMs: done - graded, loss, counts });
  }
  optimizer.dispose();
  model.dispose();
  return {
    parameters: parameterCount(config),
    gradMs: median(steps.map((s) => s.gradMs)),
    updateMs: median(steps.map((s) => s.updateMs)),
    ms: median(steps.map((s) => s.gradMs + s.updateMs)),
    loss: steps[steps.length - 1].loss,
    counts: stepCounts(steps),
  };
}

/** The device counters of the timed steps, where they ran on WebGPU: means, and the most buffers one created. */
function stepCounts(steps: readonly StepTimes[]): Timing['counts'] {
  const counted = steps.flatMap((s) => (s.counts ? [s.counts] : []));
  if (counted.length === 0) return undefined;
  return {
    dispatches: meanCount(counted, 'dispatches'),
    submits: meanCount(counted, 'submits'),
    uploads: meanCount(counted, 'uploads'),
    buffersCreated: mostCount(counted, 'buffersCreated'),
  };
}

/** One preset's medians over its timed steps. */
interface Timing {
  readonly parameters: number;
  readonly gradMs: number;
  readonly updateMs: number;
  readonly ms: number;
  readonly loss: number;
  /** On WebGPU, per timed step: dispatches, command buffers and tensor uploads (means), buffers created (most). */
  readonly counts?: {
    readonly dispatches: number;
    readonly submits: number;
    readonly uploads: number;
    readonly buffersCreated: number;
  };
}

/** The timing of the round whose ms/iteration is the median of the rounds. */
function medianRound(rounds: readonly Timing[]): Timing {
  const sorted = [...rounds].sort((a, b) => a.ms - b.ms);
  return sorted[(sorted.length - 1) >> 1];
}

function presetsFrom(positionals: readonly string[]): Preset[] {
  const presets = positionals.map((arg): Preset => {
    if (arg === 'gpt2' || arg === 'llama') return arg;
    throw new UsageError(
      `expected presets gpt2 and/or llama after the suite name, got ${JSON.stringify(arg)}`,
    );
  });
  return presets.length > 0 ? presets : ['gpt2', 'llama'];
}

export const trainSuite: Suite = {
  name: 'train',
  description:
    'training ms/iteration and tokens/s of the reference setup (char TinyShakespeare, 4x128, AdamW); --vs-torch runs the PyTorch reference interleaved',
  flags: { 'vs-torch': { type: 'boolean' }, rounds: { type: 'string' } },
  usage: '[gpt2] [llama] [--vs-torch] [--rounds N]',
  async run(options: SuiteOptions): Promise<SuiteResult> {
    const presets = presetsFrom(options.positionals);
    const vsTorch = booleanFlag(options.values, 'vs-torch');
    const rounds = integerFlag(options.values, 'rounds', 1) ?? (vsTorch ? 3 : 1);
    const loom = new Map<Preset, Timing[]>(presets.map((p) => [p, []]));
    const torch: number[] = [];
    // A B A B: every round times each preset, then the PyTorch reference, in the same window.
    for (let round = 0; round < rounds; round++) {
      for (const preset of presets) loom.get(preset)?.push(await timeTraining(preset, options.backend));
      if (vsTorch) torch.push(await torchTrainMs());
    }
    const torchMs = vsTorch ? median(torch) : undefined;
    const rows: Row[] = presets.map((preset) => {
      const t = medianRound(loom.get(preset) ?? []);
      const { batch, block } = REFERENCE;
      return {
        preset,
        parameters: t.parameters,
        'forward+backward ms': t.gradMs,
        'clip+AdamW ms': t.updateMs,
        'ms/iter': t.ms,
        'tokens/s': Math.round((batch * block * 1000) / t.ms),
        ...(torchMs === undefined ? {} : { 'PyTorch ms/iter': torchMs, 'x PyTorch': t.ms / torchMs }),
        'last loss': t.loss,
        ...(t.counts === undefined
          ? {}
          : {
              'dispatches/step': t.counts.dispatches,
              'command buffers/step': t.counts.submits,
              'tensor uploads/step': t.counts.uploads,
              'buffers created/step (most)': t.counts.buffersCreated,
            }),
      };
    });
    const notes = [`median of ${rounds} round(s); each round's figure is the median of its ${TIMED} steps.`];
    if (vsTorch) {
      notes.push(
        `PyTorch: shared/peers/torch_char_gpt.py --bench-only (gpt2 reference, OpenBLAS), run after Loom in each round; rounds: ${torch.map((ms) => ms.toFixed(1)).join(', ')} ms/iter. x PyTorch < 1 means Loom is faster.`,
      );
    }
    return {
      title: `train on ${options.backend}: 4 layers, 4 heads, dim 128, block 64, batch 12 (${REFERENCE.batch * REFERENCE.block} tokens/step); ${TIMED} steps after ${WARM_UP}`,
      rows,
      notes,
    };
  },
};
