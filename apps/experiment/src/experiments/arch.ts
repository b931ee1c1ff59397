import { EncoderDecoder, MambaLM, type Module, makeConfig, makeSeq2SeqConfig, TransformerLM } from '@loom/nn';
import { softmaxCrossEntropy, type Tensor, tensor } from '@loom/tensor';
import { type Batch, drawBatch } from '@loom/trainer/lib';
import { useTrainingBackend } from '../backend';
import { charData } from '../char-data';
import { decodeCost, type Stepper } from '../decode-timing';
import type { Experiment, ExperimentContext } from '../experiment';
import { Fitter } from '../fit';
import { mambaStepper } from '../mamba-stepper';
import { matchingMamba } from '../matching-mamba';
import { Report } from '../report';
import { seq2seqStepper } from '../seq2seq-stepper';
import { transformerStepper } from '../transformer-stepper';

const SIZES = {
  default: {
    dim: 64,
    heads: 4,
    layers: 4,
    block: 64,
    rows: 16,
    steps: 300,
    every: 50,
    chars: 300_000,
    evalBatches: 4,
    decode: 24,
  },
  quick: {
    dim: 16,
    heads: 2,
    layers: 2,
    block: 8,
    rows: 2,
    steps: 4,
    every: 2,
    chars: 4_000,
    evalBatches: 1,
    decode: 2,
  },
} as const;
type Size = (typeof SIZES)[keyof typeof SIZES];
const LR = 3e-3;
const IGNORE = -100;

/**
 * Every model is scored on the same thing: the second half of each window given the first half
 * (`prefix` = block / 2 tokens), so a prefix LM and an encoder–decoder, which only predict after their
 * prefix or source, compare with the causal models on equal terms.
 */
interface Candidate {
  readonly label: string;
  readonly module: Module;
  /** Training loss of a batch, as the architecture is trained. */
  trainLoss(batch: Batch): Tensor;
  /** Mean loss over the second half of the batch's windows. */
  evalLoss(batch: Batch): Tensor;
  stepper(capacity: number): Stepper;
  /** Tokens with a training target in each window. */
  readonly targetsPerWindow: number;
}

/** Targets of the first prefix - 1 positions ignored: only tokens after the prefix are scored. */
function secondHalf(batch: Batch, prefix: number): Int32Array {
  return batch.targets.map((t, i) => (i % batch.block < prefix - 1 ? IGNORE : t));
}

const ids = (data: Int32Array, rows: number, cols: number) => tensor(data, [rows, cols], { dtype: 'i32' }); // [rows, cols]

function crossEntropy(logits: Tensor, labels: Tensor): Tensor {
  const [b, t, v] = logits.shape;
  return softmaxCrossEntropy(logits.reshape([b * t, v]), labels.reshape([b * t]), IGNORE); // mean over scored
}

function decoderCandidate(model: TransformerLM, prefix: number): Candidate {
  return {
    label: 'decoder-only',
    module: model,
    trainLoss: (b) => model.loss(ids(b.inputs, b.rows, b.block), ids(b.targets, b.rows, b.block)),
    evalLoss: (b) => model.loss(ids(b.inputs, b.rows, b.block), ids(secondHalf(b, prefix), b.rows, b.block)),
    stepper: (capacity) => transformerStepper(model, capacity),
    targetsPerWindow: model.config.maxSeqLen,
  };
}

function prefixCandidate(model: TransformerLM, prefix: number): Candidate {
  const loss = (b: Batch) =>
    crossEntropy(
      model.forward(ids(b.inputs, b.rows, b.block), { offset: 0, prefixLength: prefix }),
      ids(secondHalf(b, prefix), b.rows, b.block),
    );
  return {
    label: 'prefix LM',
    module: model,
    trainLoss: loss,
    evalLoss: loss,
    stepper: (capacity) => transformerStepper(model, capacity),
    targetsPerWindow: model.config.maxSeqLen - prefix + 1,
  };
}

/** Source: the window's first `prefix` tokens; decoder inputs: tokens prefix-1 .. block-2; labels: prefix .. block-1. */
function seq2seqCandidate(model: EncoderDecoder, prefix: number): Candidate {
  const loss = (b: Batch) => {
    const width = b.block - prefix + 1;
    const source = new Int32Array(b.rows * prefix);
    const inputs = new Int32Array(b.rows * width);
    const labels = new Int32Array(b.rows * width);
    for (let r = 0; r < b.rows; r++) {
      const row = r * b.block;
      source.set(b.inputs.subarray(row, row + prefix), r * prefix);
      inputs.set(b.inputs.subarray(row + prefix - 1, row + b.block), r * width);
      labels.set(b.targets.subarray(row + prefix - 1, row + b.block), r * width);
    }
    const logits = model.forward(ids(source, b.rows, prefix), ids(inputs, b.rows, width)); // [B, width, V]
    return crossEntropy(logits, ids(labels, b.rows, width));
  };
  return {
    label: 'encoder–decoder',
    module: model,
    trainLoss: loss,
    evalLoss: loss,
    stepper: (capacity) => seq2seqStepper(model, capacity),
    targetsPerWindow: model.config.maxSeqLen - prefix + 1,
  };
}

function mambaCandidate(model: MambaLM, prefix: number, block: number): Candidate {
  return {
    label: 'Mamba',
    module: model,
    trainLoss: (b) => model.loss(ids(b.inputs, b.rows, b.block), ids(b.targets, b.rows, b.block)),
    evalLoss: (b) =>
      model.loss(ids(b.inputs, b.rows, b.block), ids(secondHalf(b, prefix), b.rows, b.block), IGNORE),
    stepper: () => mambaStepper(model),
    targetsPerWindow: block,
  };
}

interface Outcome {
  readonly label: string;
  readonly parameters: number;
  readonly curve: readonly { readonly step: number; readonly loss: number }[];
  readonly trainTokensPerSecond: number;
  readonly decodeTokensPerSecond: number;
}

async function meanEval(candidate: Candidate, batches: readonly Batch[]): Promise<number> {
  candidate.module.eval();
  let sum = 0;
  for (const b of batches) {
    const loss = candidate.evalLoss(b);
    sum += (await loss.data())[0];
    loss.dispose();
  }
  candidate.module.train();
  return sum / batches.length;
}

async function run(context: ExperimentContext): Promise<Report> {
  const size = SIZES[context.scale];
  useTrainingBackend();
  const data = charData(size.chars, context.data);
  const prefix = size.block / 2;
  const base = { vocabSize: data.vocabSize, dim: size.dim, numHeads: size.heads, maxSeqLen: size.block };
  const llama = makeConfig('llama', { ...base, numLayers: size.layers });
  const decoder = new TransformerLM(llama, { seed: context.seed });
  const prefixLm = new TransformerLM(llama, { seed: context.seed });
  const half = size.layers / 2;
  const seq2seq = new EncoderDecoder(
    makeSeq2SeqConfig('llama', { ...base, numLayers: half, encoderLayers: half }),
    {
      seed: context.seed,
    },
  );
  const mamba = new MambaLM(matchingMamba(data.vocabSize, size.dim, decoder.weightCount(), 4 * size.layers), {
    seed: context.seed,
  });
  const candidates = [
    decoderCandidate(decoder, prefix),
    prefixCandidate(prefixLm, prefix),
    seq2seqCandidate(seq2seq, prefix),
    mambaCandidate(mamba, prefix, size.block),
  ];
  const evalBatches = Array.from({ length: size.evalBatches }, (_, i) =>
    drawBatch(data.val, context.seed, 'evalVal', i, size.rows, size.block),
  );
  const batch = (step: number) =>
    drawBatch(data.train, context.seed, 'trainBatches', step, size.rows, size.block);
  const fitters = candidates.map(
    (c) => new Fitter(c.module.parameters(), (step) => c.trainLoss(batch(step)), LR),
  );
  const curves = await Promise.all(
    candidates.map(async (c) => [{ step: 0, loss: await meanEval(c, evalBatches) }]),
  );
  // The models take turns, `every` steps each, so a slow moment of the machine hits all of them alike.
  while (fitters[0].step < size.steps) {
    for (const [i, candidate] of candidates.entries()) {
      candidate.module.train();
      await fitters[i].run(Math.min(size.every, size.steps - fitters[i].step));
      curves[i].push({ step: fitters[i].step, loss: await meanEval(candidate, evalBatches) });
    }
    context.log(
      `arch: step ${fitters[0].step}: validation loss ${candidates.map((c, i) => `${c.label} ${curves[i][curves[i].length - 1].loss.toFixed(3)}`).join(', ')}`,
    );
  }
  const window = Int32Array.from(data.val.subarray(0, prefix + size.decode + 1));
  const decodeRate = async (c: Candidate) =>
    1000 /
    (await decodeCost(() => c.stepper(prefix + size.decode + 2), window, prefix, size.decode)).msPerToken;
  for (const c of candidates) {
    c.module.eval();
    await decodeRate(c); // warm-up: the first run compiles the decode-shaped kernels
  }
  // Decode speed: the median of three rounds, the models taking turns in each.
  const rates: number[][] = candidates.map(() => []);
  for (let round = 0; round < 3; round++) {
    for (const [i, c] of candidates.entries()) rates[i].push(await decodeRate(c));
  }
  const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const outcomes: Outcome[] = candidates.map((c, i) => ({
    label: c.label,
    parameters: c.module.weightCount(),
    curve: curves[i],
    trainTokensPerSecond: (size.steps * size.rows * size.block) / fitters[i].seconds,
    decodeTokensPerSecond: median(rates[i]),
  }));
  for (const f of fitters) f.dispose();
  for (const c of candidates) c.module.dispose();
  return write(outcomes, size, data.vocabSize, data.source, candidates);
}

function write(
  outcomes: readonly Outcome[],
  size: Size,
  vocab: number,
  source: string,
  candidates: readonly Candidate[],
): Report {
  const final = (o: Outcome) => o.curve[o.curve.length - 1].loss;
  const ranked = [...outcomes].sort((a, b) => final(a) - final(b));
  const byLabel = (label: string) => outcomes.find((o) => o.label === label);
  const decoder = byLabel('decoder-only');
  const mamba = byLabel('Mamba');
  const report = new Report('Architectures at equal parameters and token budget');
  report.paragraph(
    `Four models of width ${size.dim} on the same corpus (${source}, ${vocab} distinct characters), each trained ${size.steps} AdamW steps of ${size.rows} windows of ${size.block} characters (lr ${LR}): ` +
      `a decoder-only llama (${size.layers} layers), a prefix LM of the same shape (bidirectional over the first ${size.block / 2} characters), an encoder–decoder (${size.layers / 2} + ${size.layers / 2} layers; source = the first half, target = the second) and a Mamba whose depth is the closest in parameters. ` +
      `Validation loss is scored on the same tokens for all: the second half of each validation window given the first. ` +
      `The causal models (decoder-only, Mamba) train on ${candidates[0].targetsPerWindow} targets per window, the prefix LM and the encoder–decoder on ${candidates[1].targetsPerWindow}. ` +
      'The models trained in turns of a few steps each, and decoded in turns, so a slow moment of the machine hit all of them. Train tokens/s counts every input character (evaluation not included); decode tokens/s is one sequence after a half-window prompt, read back each token (median of 3 rounds). Times are from this machine in this window.',
  );
  report.heading('Result');
  const lines = [
    `Lowest validation loss: ${ranked[0].label} (${final(ranked[0]).toFixed(3)}), then ${ranked
      .slice(1)
      .map((o) => `${o.label} (${final(o).toFixed(3)})`)
      .join(', ')}.`,
  ];
  if (decoder) {
    const generators = outcomes.filter((o) => o !== decoder);
    const beaten = generators.filter((o) => final(o) < final(decoder));
    lines.push(
      beaten.length === 0
        ? 'The decoder-only model generated best at equal parameters and compute, as the claim says.'
        : `Against the claim, ${beaten.map((o) => o.label).join(' and ')} reached a lower loss than the decoder-only model here.`,
    );
  }
  if (decoder && mamba) {
    const gap = final(mamba) / final(decoder) - 1;
    lines.push(
      gap <= 0
        ? `Mamba's validation loss is ${(-100 * gap).toFixed(1)}% below the decoder-only llama's: at equal parameters it did at least as well.`
        : `Mamba's validation loss is ${(100 * gap).toFixed(1)}% above the decoder-only llama's (${gap <= 0.1 ? 'within' : 'more than'} 10% worse).`,
    );
  }
  report.paragraph(lines.join(' '));
  report.table(
    ['model', 'parameters', 'validation loss', 'train tokens/s', 'decode tokens/s'],
    outcomes.map((o) => [
      o.label,
      o.parameters,
      final(o).toFixed(3),
      o.trainTokensPerSecond.toFixed(0),
      o.decodeTokensPerSecond.toFixed(0),
    ]),
  );
  report.chart('validation-loss', {
    title: 'Validation loss (second half of each window)',
    xLabel: 'step',
    yLabel: 'loss (nats per character)',
    series: outcomes.map((o) => ({ label: o.label, points: o.curve.map((p) => ({ x: p.step, y: p.loss })) })),
  });
  return report;
}

export const archExperiment: Experiment = {
  name: 'arch',
  description:
    'decoder-only, prefix LM, encoder–decoder and Mamba at equal parameters and tokens: loss, train and decode speed',
  run,
};
