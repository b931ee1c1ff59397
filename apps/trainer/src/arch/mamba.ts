import type { NamedTensor } from '@loom/models';
import { MambaLM, makeMambaConfig, type TransformerConfig } from '@loom/nn';
import { scope, tensor } from '@loom/tensor';
import { StreamDecoder } from '@loom/tokenizer';
import { type Batch, trainBatches } from '../batches';
import { evalBatches, meanLoss } from '../evaluate';
import type { TextSink } from '../io';
import type { TrainOptions } from '../options';
import { CounterRng, keyedSeed } from '../random';
import { argmaxOf, sampleFrom } from '../sample';
import { STORIES_PROMPT } from '../sample-text';
import type { ArchData, Architecture, ArchModel } from './architecture';

/** Every parameter of the model as checkpoint tensors, under the model's names. */
async function namedTensors(model: MambaLM): Promise<NamedTensor[]> {
  const out: NamedTensor[] = [];
  for (const [name, p] of model.namedParameters()) {
    out.push({ name, shape: [...p.shape], data: await p.float32Data() });
  }
  return out;
}

/**
 * Streams `options.sampleTokens` tokens after the prompt to `out`, decoding from the model's
 * fixed-size state (greedy at temperature 0, else seeded sampling); returns the whole text.
 */
async function writeMambaSample(model: MambaLM, data: ArchData, out: TextSink): Promise<string> {
  const { dataset, options } = data;
  const prompt = options.prompt ?? (options.data === undefined ? STORIES_PROMPT : '\n');
  const ids = dataset.tokenizer.encode(prompt);
  if (ids.length === 0) throw new Error(`--prompt ${JSON.stringify(prompt)}: encodes to no tokens`);
  const how = options.temperature === 0 ? 'greedy' : `temperature ${options.temperature}`;
  out.write(`--- sample (${options.sampleTokens} tokens, ${how}) ---\n${prompt}`);
  const decoder = new StreamDecoder(dataset.tokenizer);
  const rng = new CounterRng(keyedSeed(options.seed, 'sample', 0));
  const state = model.newState();
  const wasTraining = model.training;
  model.eval();
  let text = prompt;
  try {
    let pending = ids;
    for (let i = 0; i < options.sampleTokens; i++) {
      const logits = scope(() =>
        model.prefill(tensor(pending, [1, pending.length], { dtype: 'i32' }), state),
      );
      const scores = await logits.data();
      logits.dispose();
      const id =
        options.temperature === 0 ? argmaxOf(scores) : sampleFrom(scores, options.temperature, rng.next());
      const piece = decoder.push(id);
      text += piece;
      out.write(piece);
      pending = [id];
    }
  } finally {
    state.dispose();
    model.train(wasTraining);
  }
  const rest = decoder.flush();
  out.write(`${rest}\n---\n`);
  return text + rest;
}

/** The sizes of a MambaLM from the run's config: vocabulary, width, depth and norm epsilon; Mamba's defaults otherwise. */
function mambaConfigOf(config: TransformerConfig): ReturnType<typeof makeMambaConfig> {
  return makeMambaConfig({
    vocabSize: config.vocabSize,
    dim: config.dim,
    numLayers: config.numLayers,
    normEps: config.normEps,
  });
}

function build(config: TransformerConfig, data: ArchData): ArchModel {
  const o: TrainOptions = data.options;
  const { dataset } = data;
  const mambaConfig = mambaConfigOf(config);
  const model = new MambaLM(mambaConfig, { seed: o.seed });
  const loss = (batch: Batch) =>
    scope(() => {
      const shape = [batch.rows, batch.block];
      return model.loss(
        tensor(batch.inputs, shape, { dtype: 'i32' }),
        tensor(batch.targets, shape, { dtype: 'i32' }),
      );
    });
  return {
    module: model,
    config: mambaConfig,
    tokensPerStep: o.batch * o.block * o.gradAccum,
    trainBatches: (step) => trainBatches(dataset.train, o.seed, step, o.gradAccum, o.batch, o.block),
    evalBatches: (split) =>
      split === 'train'
        ? evalBatches(dataset.train, o.seed, 'evalTrain', o.evalBatches, o.batch, o.block)
        : evalBatches(dataset.val, o.seed, 'evalVal', o.evalBatches, o.batch, o.block),
    loss,
    evaluate: async (batches) => ({ loss: await meanLoss(model, batches, loss) }),
    tensors: async () => ({ body: await namedTensors(model), heads: [] }),
    report: (out) => (o.sampleTokens > 0 ? writeMambaSample(model, data, out) : Promise.resolve(undefined)),
  };
}

/**
 * Mamba (selective state-space blocks, @loom/nn's MambaLM), trained on next-token prediction
 * with the decoder's batches; `--dim`, `--layers` and the vocabulary size it from the run's config
 * (heads are unused), Mamba's defaults the rest (state 16, expand 2, conv 4). Reports a sample
 * decoded from its fixed-size state.
 */
export const mamba: Architecture = { name: 'mamba', extraTokens: 0, build };
