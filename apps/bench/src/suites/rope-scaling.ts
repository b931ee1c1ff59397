import { readFileSync, writeFileSync } from 'node:fs';
import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { tensorsFromTransformer, transformerFromTensors } from '@loom/models';
import { AdamW, makeConfig, type RopeScaling, readClipFactor, TransformerLM, warmupCosine } from '@loom/nn';
import { setBackend, type Tensor, tensor, uniformAt } from '@loom/tensor';
import { CharTokenizer } from '@loom/tokenizer';
import { integerFlag, stringFlag } from '../flags';
import { sharedDataFile } from '../shared-data';
import type { Row, Suite, SuiteResult } from '../suite';

/** Trained at 64 positions, evaluated at 256: every scaling stretches by 256 / 64 = 4. */
const TRAIN_CONTEXT = 64;
const EVAL_CONTEXT = 256;
const FACTOR = EVAL_CONTEXT / TRAIN_CONTEXT;
const BANDS: readonly (readonly [number, number])[] = [
  [0, 64],
  [64, 128],
  [128, 256],
];
const MODEL = { dim: 64, numLayers: 2, numHeads: 4, batch: 8 } as const;

/** Each scaling as a config entry, all stretching the 64 trained positions to 256. */
const SCALINGS: readonly (readonly [name: string, scaling: RopeScaling | undefined])[] = [
  ['none', undefined],
  ['linear', { type: 'linear', factor: FACTOR }],
  ['dynamic', { type: 'dynamic', factor: FACTOR, originalMaxSeqLen: TRAIN_CONTEXT }],
  ['yarn', { type: 'yarn', factor: FACTOR, originalMaxSeqLen: TRAIN_CONTEXT }],
  [
    'llama3',
    { type: 'llama3', factor: FACTOR, lowFreqFactor: 1, highFreqFactor: 4, originalMaxSeqLen: TRAIN_CONTEXT },
  ],
];

/** Char-level TinyShakespeare: the first 90% to train on, the rest to validate. */
function corpus(): { train: Int32Array; val: Int32Array; vocabSize: number } {
  const path = sharedDataFile('tinyshakespeare.txt');
  if (path === undefined) {
    throw new Error(
      'bench rope-scaling: tinyshakespeare.txt not found; put the shared data folder at ../shared/data beside the repository',
    );
  }
  const text = readFileSync(path, 'utf8');
  const tokenizer = CharTokenizer.fromCorpus(text);
  const ids = Int32Array.from(tokenizer.encode(text));
  const split = Math.floor(ids.length * 0.9);
  return { train: ids.subarray(0, split), val: ids.subarray(split), vocabSize: tokenizer.vocabSize };
}

/** `rows` windows of `block` inputs and their next-token targets, starting at `start(row)`. */
function windows(tokens: Int32Array, rows: number, block: number, start: (row: number) => number) {
  const inputs = new Int32Array(rows * block);
  const targets = new Int32Array(rows * block);
  for (let row = 0; row < rows; row++) {
    const at = start(row);
    inputs.set(tokens.subarray(at, at + block), row * block);
    targets.set(tokens.subarray(at + 1, at + block + 1), row * block);
  }
  return { inputs, targets };
}

/** Trains a small llama at context 64 with plain RoPE (AdamW, warmup-cosine). */
async function train(tokens: Int32Array, vocabSize: number, steps: number): Promise<TransformerLM> {
  setBackend(new AutodiffBackend(new CpuBackend()));
  const config = makeConfig('llama', { vocabSize, ...MODEL, maxSeqLen: TRAIN_CONTEXT });
  const model = new TransformerLM(config, { seed: 1337 });
  const params = model.parameters();
  const optimizer = new AdamW({ beta1: 0.9, beta2: 0.99, weightDecay: 0.1 });
  const lr = warmupCosine({ maxLr: 3e-3, minLr: 3e-4, warmup: 20, decaySteps: steps });
  for (let step = 0; step < steps; step++) {
    const span = tokens.length - TRAIN_CONTEXT - 1;
    const batch = windows(tokens, MODEL.batch, TRAIN_CONTEXT, (row) =>
      Math.floor(uniformAt(step, row) * span),
    );
    const shape = [MODEL.batch, TRAIN_CONTEXT];
    const inputs = tensor(batch.inputs, shape, { dtype: 'i32' });
    const targets = tensor(batch.targets, shape, { dtype: 'i32' });
    const { value, grads } = valueAndGrad(() => model.loss(inputs, targets), params);
    await value.item();
    optimizer.step(params, grads, lr(step), await readClipFactor(grads, 1));
    for (const t of [inputs, targets, value, ...grads]) t.dispose();
  }
  optimizer.dispose();
  return model;
}

/** Mean next-token loss of each band of positions over the validation windows. */
async function bandLosses(model: TransformerLM, inputs: Tensor, targets: Int32Array): Promise<number[]> {
  const logits = await model.forward(inputs).data(); // [rows, 256, vocab]
  const vocab = model.config.vocabSize;
  const sums = BANDS.map(() => 0);
  const counts = BANDS.map(() => 0);
  for (let k = 0; k < targets.length; k++) {
    const row = Array.from(logits.subarray(k * vocab, (k + 1) * vocab));
    const max = Math.max(...row);
    const logSum = Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0)) + max;
    const band = BANDS.findIndex(([lo, hi]) => k % EVAL_CONTEXT >= lo && k % EVAL_CONTEXT < hi);
    sums[band] += logSum - row[targets[k]];
    counts[band] += 1;
  }
  return sums.map((s, i) => s / counts[i]);
}

/** The result as a Markdown table with its notes. */
function markdown(result: SuiteResult): string {
  const columns = Object.keys(result.rows[0] ?? {});
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? v.toFixed(3) : (v ?? ''));
  const lines = [
    `# ${result.title}`,
    '',
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...result.rows.map((row) => `| ${columns.map((c) => cell(row[c])).join(' | ')} |`),
    '',
    ...(result.notes ?? []).map((note) => `- ${note}`),
  ];
  return `${lines.join('\n')}\n`;
}

export const ropeScalingSuite: Suite = {
  name: 'rope-scaling',
  description:
    'trains a small llama on char TinyShakespeare at context 64, then reports validation loss per position band at 256 under each RoPE scaling (none, linear, dynamic, yarn, llama3)',
  flags: { steps: { type: 'string' }, windows: { type: 'string' }, report: { type: 'string' } },
  usage: '[--steps N (300)] [--windows N (16)] [--report out.md]',
  async run(options): Promise<SuiteResult> {
    const steps = integerFlag(options.values, 'steps', 1) ?? 300;
    const count = integerFlag(options.values, 'windows', 1) ?? 16;
    const { train: trainTokens, val, vocabSize } = corpus();
    const trained = await train(trainTokens, vocabSize, steps);
    const tensors = await tensorsFromTransformer(trained);
    trained.dispose();
    setBackend(new CpuBackend());
    const stride = Math.floor((val.length - EVAL_CONTEXT - 1) / count);
    const batch = windows(val, count, EVAL_CONTEXT, (row) => row * stride);
    const inputs = tensor(batch.inputs, [count, EVAL_CONTEXT], { dtype: 'i32' });
    const rows: Row[] = [];
    for (const [name, scaling] of SCALINGS) {
      const config = makeConfig('llama', {
        vocabSize,
        ...MODEL,
        maxSeqLen: EVAL_CONTEXT,
        ...(scaling === undefined ? {} : { ropeScaling: scaling }),
      });
      const model = transformerFromTensors({ config, tensors });
      const losses = await bandLosses(model, inputs, batch.targets);
      model.dispose();
      rows.push({
        scaling: name,
        ...Object.fromEntries(BANDS.map(([lo, hi], i) => [`loss ${lo}-${hi - 1}`, losses[i]])),
      });
    }
    inputs.dispose();
    const result: SuiteResult = {
      title: `Validation loss per position band at context ${EVAL_CONTEXT} after training at ${TRAIN_CONTEXT}`,
      rows,
      notes: [
        `llama dim ${MODEL.dim}, ${MODEL.numLayers} layers, ${MODEL.numHeads} heads (headDim 16), theta 10000; char TinyShakespeare, ${steps} AdamW steps of batch ${MODEL.batch} at context ${TRAIN_CONTEXT} with plain RoPE`,
        `each scaling applied at evaluation only (no fine-tuning), factor ${FACTOR}, original context ${TRAIN_CONTEXT}; llama3 low/high freq factors 1/4; yarn betas 32/1 (attention factor 0.1 ln 4 + 1)`,
        `dynamic: one forward pass over all ${EVAL_CONTEXT} positions, so its frequencies are those of length ${EVAL_CONTEXT} for every position (as transformers does)`,
        `${count} validation windows of ${EVAL_CONTEXT} positions, spread evenly over the last 10% of the text`,
      ],
    };
    const report = stringFlag(options.values, 'report');
    if (report !== undefined) writeFileSync(report, markdown(result));
    return result;
  },
};
