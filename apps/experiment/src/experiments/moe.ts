import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  activeParameterCount,
  type MoeStats,
  makeConfig,
  parameterCount,
  type TransformerConfig,
  TransformerLM,
} from '@loom/nn';
import { scope, softmaxCrossEntropy, tensor } from '@loom/tensor';
import { type Batch, drawBatch } from '@loom/trainer/lib';
import { useTrainingBackend } from '../backend';
import { charData } from '../char-data';
import type { Experiment, ExperimentContext } from '../experiment';
import { Fitter } from '../fit';
import { Report } from '../report';

const SIZES = {
  default: {
    dim: 64,
    heads: 4,
    layers: 2,
    block: 64,
    rows: 16,
    experts: 8,
    expertHidden: 96,
    steps: 1000,
    every: 100,
    chars: 300_000,
    evalBatches: 8,
  },
  quick: {
    dim: 16,
    heads: 2,
    layers: 1,
    block: 8,
    rows: 2,
    experts: 4,
    expertHidden: 16,
    steps: 4,
    every: 2,
    chars: 4_000,
    evalBatches: 1,
  },
} as const;
type Size = (typeof SIZES)[keyof typeof SIZES];
const TOP_K = 2;
const CAPACITY_FACTOR = 1.25;
const AUX_LOSS_COEF = 0.01;
const LR = 3e-3;
/** An expert's load counts as balanced within this factor of its fair share N·k / E. */
const BALANCE_FACTOR = 2;

/** The shared TinyShakespeare beside the checkout (see /work/shared/data/README.md), when it is there. */
const SHAKESPEARE = fileURLToPath(new URL('../../../../../shared/data/tinyshakespeare.txt', import.meta.url));

const ids = (data: Int32Array, b: Batch) => tensor(data, [b.rows, b.block], { dtype: 'i32' }); // [rows, block]

/** Mean cross-entropy of a batch, without the load-balancing term, so dense and MoE are scored alike. */
async function validationLoss(model: TransformerLM, batches: readonly Batch[]): Promise<number> {
  model.eval();
  let sum = 0;
  for (const b of batches) {
    const loss = scope(() => {
      const logits = model.forward(ids(b.inputs, b)); // [B, T, V]
      const [rows, t, v] = logits.shape;
      return softmaxCrossEntropy(logits.reshape([rows * t, v]), ids(b.targets, b).reshape([rows * t]));
    });
    sum += await loss.item();
    loss.dispose();
  }
  model.train();
  return sum / batches.length;
}

/** Assignments per layer and expert over the batches, and the share of assignments dropped at capacity. */
async function expertLoad(
  model: TransformerLM,
  batches: readonly Batch[],
): Promise<{ load: number[][]; dropped: number }> {
  model.eval();
  const load = model.layers.map(() => new Array<number>(model.config.moe?.experts ?? 0).fill(0));
  let dropped = 0;
  let assignments = 0;
  for (const b of batches) {
    const stats: MoeStats[] = [];
    scope(() => model.hidden(ids(b.inputs, b), { offset: 0 }, stats)).dispose();
    for (const [layer, s] of stats.entries()) {
      const counts = await s.load.data();
      counts.forEach((c, e) => {
        load[layer][e] += c;
        assignments += c;
      });
      dropped += await s.dropped.item();
      for (const t of [s.auxLoss, s.load, s.dropped]) t.dispose();
    }
  }
  model.train();
  return { load, dropped: dropped / assignments };
}

interface Outcome {
  readonly label: string;
  readonly config: TransformerConfig;
  readonly curve: readonly { readonly step: number; readonly loss: number }[];
  readonly seconds: number;
}

async function run(context: ExperimentContext): Promise<Report> {
  const size = SIZES[context.scale];
  useTrainingBackend();
  const path =
    context.data ?? (context.scale === 'default' && existsSync(SHAKESPEARE) ? SHAKESPEARE : undefined);
  const data = charData(size.chars, path);
  const base = {
    vocabSize: data.vocabSize,
    dim: size.dim,
    numHeads: size.heads,
    numLayers: size.layers,
    maxSeqLen: size.block,
  };
  const moeConfig = makeConfig('llama', {
    ...base,
    hiddenDim: size.expertHidden,
    moe: { experts: size.experts, topK: TOP_K, capacityFactor: CAPACITY_FACTOR, auxLossCoef: AUX_LOSS_COEF },
  });
  // The dense feed-forward is as wide as the k experts a token passes through: the same active parameters,
  // short only of the router's dim·E per layer.
  const denseConfig = makeConfig('llama', { ...base, hiddenDim: TOP_K * size.expertHidden });
  const models = [
    { label: 'dense', model: new TransformerLM(denseConfig, { seed: context.seed }) },
    { label: `MoE ${TOP_K} of ${size.experts}`, model: new TransformerLM(moeConfig, { seed: context.seed }) },
  ];
  const evalBatches = Array.from({ length: size.evalBatches }, (_, i) =>
    drawBatch(data.val, context.seed, 'evalVal', i, size.rows, size.block),
  );
  const batch = (step: number) =>
    drawBatch(data.train, context.seed, 'trainBatches', step, size.rows, size.block);
  const fitters = models.map(
    ({ model }) =>
      new Fitter(
        model.parameters(),
        (step) => {
          const b = batch(step);
          return model.loss(ids(b.inputs, b), ids(b.targets, b));
        },
        LR,
      ),
  );
  const curves = await Promise.all(
    models.map(async ({ model }) => [{ step: 0, loss: await validationLoss(model, evalBatches) }]),
  );
  // The models take turns, `every` steps each, so a slow moment of the machine hits both alike.
  while (fitters[0].step < size.steps) {
    for (const [i, { model }] of models.entries()) {
      await fitters[i].run(Math.min(size.every, size.steps - fitters[i].step));
      curves[i].push({ step: fitters[i].step, loss: await validationLoss(model, evalBatches) });
    }
    context.log(
      `moe: step ${fitters[0].step}: validation loss ${models.map((m, i) => `${m.label} ${curves[i][curves[i].length - 1].loss.toFixed(3)}`).join(', ')}`,
    );
  }
  const load = await expertLoad(models[1].model, evalBatches);
  const outcomes: Outcome[] = models.map(({ label, model }, i) => ({
    label,
    config: model.config,
    curve: curves[i],
    seconds: fitters[i].seconds,
  }));
  for (const f of fitters) f.dispose();
  for (const { model } of models) model.dispose();
  return write(outcomes, load, size, data.source);
}

function write(
  outcomes: readonly Outcome[],
  routed: { readonly load: readonly (readonly number[])[]; readonly dropped: number },
  size: Size,
  source: string,
): Report {
  const final = (o: Outcome) => o.curve[o.curve.length - 1].loss;
  const [dense, moe] = outcomes;
  const report = new Report('Mixture of experts against a dense model of the same active parameters');
  report.paragraph(
    `Two llama models of width ${size.dim} and ${size.layers} layers on ${source}, character level, each trained ${size.steps} AdamW steps of ${size.rows} windows of ${size.block} characters (lr ${LR}, the same batches): ` +
      `a MoE whose feed-forward is ${size.experts} SwiGLU experts of hidden ${size.expertHidden}, ${TOP_K} per token (capacity factor ${CAPACITY_FACTOR}, load-balancing loss weight ${AUX_LOSS_COEF}), ` +
      `and a dense model whose feed-forward has hidden ${TOP_K * size.expertHidden}, so a token passes through the same number of weights. ` +
      'Validation loss is the plain cross-entropy on held-out windows (the load-balancing term left out). The models trained in turns; times are from this shared machine in this window.',
  );
  report.heading('Result');
  const gap = final(moe) - final(dense);
  const fair = 1 / size.experts; // of the assignments
  const shares = routed.load.map((counts) => {
    const total = counts.reduce((a, b) => a + b, 0);
    return counts.map((c) => c / total);
  });
  const worst = Math.max(...shares.flat().map((s) => Math.max(s / fair, fair / s)));
  const balanced = worst <= BALANCE_FACTOR;
  report.paragraph(
    `${gap < 0 ? 'The MoE beat' : 'The MoE did not beat'} the dense model at equal steps and active parameters: validation loss ${final(moe).toFixed(3)} against ${final(dense).toFixed(3)} (${gap < 0 ? '' : '+'}${gap.toFixed(3)} nats per character). ` +
      `Its expert load ${balanced ? 'stayed' : 'did not stay'} balanced: every expert took between 1/${BALANCE_FACTOR} and ${BALANCE_FACTOR}× its fair share of ${(100 / size.experts).toFixed(1)}% of the assignments in every layer (worst ratio ${worst.toFixed(2)}); ` +
      `${(100 * routed.dropped).toFixed(2)}% of the assignments were dropped at capacity.`,
  );
  report.table(
    ['model', 'parameters (total)', 'parameters (active)', 'validation loss', 'train seconds'],
    outcomes.map((o) => [
      o.label,
      parameterCount(o.config),
      activeParameterCount(o.config),
      final(o).toFixed(3),
      o.seconds.toFixed(0),
    ]),
  );
  report.heading('Load per expert (validation batches)');
  report.table(
    ['layer', ...Array.from({ length: size.experts }, (_, e) => `expert ${e}`)],
    shares.map((row, layer) => [layer, ...row.map((s) => `${(100 * s).toFixed(1)}%`)]),
  );
  report.chart('validation-loss', {
    title: 'Validation loss',
    xLabel: 'step',
    yLabel: 'loss (nats per character)',
    series: outcomes.map((o) => ({ label: o.label, points: o.curve.map((p) => ({ x: p.step, y: p.loss })) })),
  });
  return report;
}

export const moeExperiment: Experiment = {
  name: 'moe',
  description:
    'a top-2 mixture of experts against a dense model of the same active parameters: validation loss and expert load',
  run,
};
