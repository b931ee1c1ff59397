import { tensorsFromTransformer } from '@loom/models';
import { type TransformerConfig, TransformerLM } from '@loom/nn';
import { scope, type Tensor, tensor } from '@loom/tensor';
import { type Batch, trainBatches } from '../batches';
import { evalBatches, meanLoss } from '../evaluate';
import { writeSample } from '../sample-text';
import type { ArchData, Architecture, ArchModel } from './architecture';

/** Mean next-token cross-entropy of a decoder on a batch of inputs and shifted targets. */
export function decoderLoss(model: TransformerLM, batch: Batch): Tensor {
  return scope(() => {
    const shape = [batch.rows, batch.block];
    return model.loss(
      tensor(batch.inputs, shape, { dtype: 'i32' }),
      tensor(batch.targets, shape, { dtype: 'i32' }),
    );
  });
}

function build(config: TransformerConfig, { dataset, options: o }: ArchData): ArchModel {
  const model = new TransformerLM(config, { seed: o.seed, dropout: o.dropout });
  const loss = (batch: Batch) => decoderLoss(model, batch);
  return {
    module: model,
    config,
    tokensPerStep: o.batch * o.block * o.gradAccum,
    trainBatches: (step) => trainBatches(dataset.train, o.seed, step, o.gradAccum, o.batch, o.block),
    evalBatches: (split) =>
      split === 'train'
        ? evalBatches(dataset.train, o.seed, 'evalTrain', o.evalBatches, o.batch, o.block)
        : evalBatches(dataset.val, o.seed, 'evalVal', o.evalBatches, o.batch, o.block),
    loss,
    evaluate: async (batches) => ({ loss: await meanLoss(model, batches, loss) }),
    tensors: async () => ({ body: await tensorsFromTransformer(model), heads: [] }),
    report: (out) =>
      o.sampleTokens > 0 ? writeSample(model, dataset.tokenizer, o, out) : Promise.resolve(undefined),
  };
}

/** The decoder-only language model (TransformerLM), trained on next-token prediction; reports a sample. */
export const decoder: Architecture = { name: 'decoder', extraTokens: 0, build };
