import type { NamedTensor } from '@loom/models';
import {
  SPECIAL_TOKEN_COUNT,
  type SpecialTokens,
  specialTokensAfter,
  type TransformerConfig,
  TransformerEncoder,
} from '@loom/nn';
import {
  argmax,
  cast,
  compare,
  concat,
  keep,
  scope,
  softmaxCrossEntropy,
  sum,
  type Tensor,
  tensor,
} from '@loom/tensor';
import type { Batch } from '../batches';
import type { TextSink } from '../io';
import type { StreamName } from '../random';
import type { ArchData, Architecture, ArchModel, Evaluation, Split } from './architecture';
import { COUNT_TASK_CLASSES, countTaskBatch, countTaskIds } from './count-task';
import { fillIn } from './fill-in';
import { mlmBatch } from './mlm-batches';

/** Parameters of the classifier head, saved beside the model (config.json describes the body only). */
const HEAD_PREFIX = 'classifier.';

const EVAL_STREAM: Readonly<Record<Split, StreamName>> = { train: 'evalTrain', val: 'evalVal' };

/** The predictions of one batch: scores [N, classes] and targets i32 [N] (-100 where nothing is asked). */
interface Scored {
  readonly scores: Tensor;
  readonly targets: Tensor;
}

/** What the encoder learns from: masked tokens, or the generated classification task. */
interface EncoderObjective {
  readonly batch: (stream: StreamName, index: number) => Batch;
  readonly score: (batch: Batch) => Scored;
  /** Predictions an evaluation batch asks for (masked positions, or rows). */
  readonly predictions: (batch: Batch) => number;
  /** The end-of-run text about an evaluation of the validation batches. */
  readonly describe: (evaluation: Evaluation, batches: readonly Batch[]) => Promise<string>;
}

/** Right predictions of scores [N, C] against targets i32 [N] (targets outside 0..C-1 never count). */
function correctOf(scores: Tensor, targets: Tensor): Tensor {
  return sum(cast(compare('eq', argmax(scores, -1), targets), 'f32'));
}

function mlmObjective(model: TransformerEncoder, data: ArchData, special: SpecialTokens): EncoderObjective {
  const { dataset, options: o } = data;
  const baseVocab = dataset.tokenizer.vocabSize;
  const source = (tokens: Int32Array) => ({
    tokens,
    special,
    baseVocab,
    seed: o.seed,
    rows: o.batch,
    block: o.block,
  });
  const train = source(dataset.train);
  const val = source(dataset.val);
  const baseline = frequencyBaseline(dataset.train, baseVocab);
  return {
    batch: (stream, index) => mlmBatch(stream === 'evalVal' ? val : train, stream, index),
    score: (batch) =>
      scope(() => {
        const shape = [batch.rows, batch.block];
        const targets = tensor(batch.targets, [batch.rows * batch.block], { dtype: 'i32' });
        const logits = model.mlmLogits(model.hidden(tensor(batch.inputs, shape, { dtype: 'i32' }))); // [B, T, V]
        return { scores: logits.reshape([batch.rows * batch.block, model.config.vocabSize]), targets }; // [B*T, V]
      }),
    predictions: (batch) => batch.targets.reduce((n, t) => n + (t >= 0 ? 1 : 0), 0),
    describe: async (e, batches) => {
      const token = JSON.stringify(dataset.tokenizer.decode([baseline.id]));
      return (
        `masked-token accuracy (validation) ${formatShare(e.accuracy)}; frequency baseline ` +
        `(always ${token}, the most common training token) ${formatShare(baseline.accuracyOn(dataset.val))}\n` +
        (await fillIn(model, batches[0], dataset.tokenizer))
      );
    },
  };
}

function classifyObjective(
  model: TransformerEncoder,
  data: ArchData,
  special: SpecialTokens,
): EncoderObjective {
  const { dataset, options: o } = data;
  const ids = countTaskIds(dataset.tokenizer, special);
  return {
    batch: (stream, index) => countTaskBatch(ids, o.seed, stream, index, o.batch, o.block),
    score: (batch) =>
      scope(() => {
        const labels = tensor(batch.labels ?? new Int32Array(batch.rows).fill(-1), [batch.rows], {
          dtype: 'i32',
        });
        const inputs = tensor(batch.inputs, [batch.rows, batch.block], { dtype: 'i32' });
        return { scores: model.classifierLogits(inputs, batch.lengths), targets: labels }; // [B, classes]
      }),
    predictions: (batch) => batch.rows,
    describe: async (e) =>
      `classification accuracy on held-out strings ("more a than b?") ${formatShare(e.accuracy)}\n`,
  };
}

function formatShare(value: number | undefined): string {
  return value === undefined ? 'n/a' : value.toFixed(4);
}

/** The most common token of `tokens` and the share of masked-token targets that guess gets right. */
export function frequencyBaseline(
  tokens: Int32Array,
  vocab: number,
): { id: number; accuracyOn: (split: Int32Array) => number } {
  const counts = new Float64Array(vocab);
  for (const t of tokens) counts[t]++;
  let id = 0;
  for (let i = 1; i < vocab; i++) if (counts[i] > counts[id]) id = i;
  return {
    id,
    accuracyOn: (split) => split.reduce((n, t) => n + (t === id ? 1 : 0), 0) / Math.max(1, split.length),
  };
}

/** Mean loss and accuracy over batches in evaluation mode, read back once. */
async function evaluate(
  model: TransformerEncoder,
  objective: EncoderObjective,
  batches: readonly Batch[],
): Promise<Evaluation> {
  if (batches.length === 0) throw new Error('encoder evaluate: expected at least one batch, got none');
  const wasTraining = model.training;
  model.eval();
  let total: Tensor | undefined;
  try {
    for (const batch of batches) {
      const previous = total;
      total = keep(
        scope(() => {
          const { scores, targets } = objective.score(batch);
          const loss = softmaxCrossEntropy(scores, targets);
          const both = concat([loss.reshape([1]), correctOf(scores, targets).reshape([1])]); // [2]
          return previous ? previous.add(both) : both;
        }),
      );
      previous?.dispose();
    }
    const [lossSum, correct] = await total!.data();
    const predictions = batches.reduce((n, b) => n + objective.predictions(b), 0);
    return { loss: lossSum / batches.length, accuracy: correct / Math.max(1, predictions) };
  } finally {
    total?.dispose();
    model.train(wasTraining);
  }
}

async function namedTensors(model: TransformerEncoder): Promise<NamedTensor[]> {
  const out: NamedTensor[] = [];
  for (const [name, p] of model.namedParameters()) {
    out.push({ name, shape: [...p.shape], data: await p.float32Data() });
  }
  return out;
}

function build(config: TransformerConfig, data: ArchData): ArchModel {
  const o = data.options;
  const special = specialTokensAfter(data.dataset.tokenizer.vocabSize);
  const classify = o.objective === 'classify';
  const model = new TransformerEncoder(config, {
    seed: o.seed,
    dropout: o.dropout,
    numClasses: classify ? COUNT_TASK_CLASSES : undefined,
  });
  const objective = classify ? classifyObjective(model, data, special) : mlmObjective(model, data, special);
  const evalBatches = (split: Split) =>
    Array.from({ length: o.evalBatches }, (_, i) => objective.batch(EVAL_STREAM[split], i));
  return {
    module: model,
    config,
    tokensPerStep: o.batch * o.block * o.gradAccum,
    trainBatches: (step) =>
      Array.from({ length: o.gradAccum }, (_, micro) =>
        objective.batch('trainBatches', step * o.gradAccum + micro),
      ),
    evalBatches,
    loss: (batch) =>
      scope(() => {
        const { scores, targets } = objective.score(batch);
        return softmaxCrossEntropy(scores, targets);
      }),
    evaluate: (batches) => evaluate(model, objective, batches),
    tensors: async () => {
      const all = await namedTensors(model);
      return {
        body: all.filter((t) => !t.name.startsWith(HEAD_PREFIX)),
        heads: all.filter((t) => t.name.startsWith(HEAD_PREFIX)),
      };
    },
    report: async (out: TextSink) => {
      const batches = evalBatches('val');
      const text = await objective.describe(await evaluate(model, objective, batches), batches);
      out.write(text);
      return text;
    },
  };
}

/**
 * The encoder-only (BERT-style) model: masked-token training (`mlm`, the default) or the generated
 * classification task (`classify`); its vocabulary adds [PAD], [CLS] and [MASK] after the tokenizer's.
 */
export const encoder: Architecture = {
  name: 'encoder',
  extraTokens: SPECIAL_TOKEN_COUNT,
  build,
};
