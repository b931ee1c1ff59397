import { type CheckpointConfig, isMambaConfig } from '@loom/models';
import { memoryEstimate, type TransformerConfig } from '@loom/nn';
import type { Corpus } from './corpus';
import type { Dataset } from './dataset';
import type { TrainOptions } from './options';

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

function thousands(n: number): string {
  return n.toLocaleString('en-US');
}

/** The model line of the header: the architecture's sizes, its real parameter count and (transformers) memory. */
function describeModel(
  o: TrainOptions,
  config: TransformerConfig,
  built: CheckpointConfig,
  parameters: number,
): string {
  const arch = o.arch === 'decoder' ? '' : `${o.arch} (${o.objective}), `;
  if (isMambaConfig(built)) {
    return (
      `model: ${arch}${built.numLayers} layers, dim ${built.dim}, state ${built.stateSize}, block ${o.block}; ` +
      `${thousands(parameters)} parameters; backend ${o.backend}`
    );
  }
  const memory = memoryEstimate(config, o.batch, o.block);
  const heads =
    config.numKvHeads === config.numHeads
      ? `${config.numHeads} heads`
      : `${config.numHeads} heads (${config.numKvHeads} kv)`;
  return (
    `model: ${arch}${config.preset}, ${config.numLayers} layers, ${heads}, dim ${config.dim}, block ${config.maxSeqLen}; ` +
    `${thousands(parameters)} parameters, about ${mb(memory.total)} to train; backend ${o.backend}`
  );
}

/**
 * The header a run prints before training: data, model, optimisation, output. `built` is the config of the model
 * the architecture built from the run's `config` and `parameters` the count of its weights (heads included).
 */
export function describeRun(
  o: TrainOptions,
  corpus: Corpus,
  dataset: Dataset,
  config: TransformerConfig,
  built: { readonly config: CheckpointConfig; readonly parameters: number },
  resumedAt: number | undefined,
): string {
  const clip = o.clip > 0 ? `clip ${o.clip}` : 'no clipping';
  const lines = [
    `data:  ${corpus.source} (${thousands(corpus.text.length)} chars), ${dataset.tokenizer.kind} tokenizer of ${dataset.tokenizer.vocabSize} tokens; ` +
      `train ${thousands(dataset.train.length)} / val ${thousands(dataset.val.length)} tokens`,
    describeModel(o, config, built.config, built.parameters),
    `optim: AdamW lr ${o.lr} -> ${o.minLr} (warmup ${o.warmup}, cosine to step ${o.iters}), betas (${o.beta1}, ${o.beta2}), ` +
      `weight decay ${o.weightDecay}, ${clip}, dropout ${o.dropout}; ${o.batch} x ${o.block} tokens` +
      (o.gradAccum > 1 ? ` x ${o.gradAccum} micro-batches` : '') +
      ` per step, seed ${o.seed}`,
    `out:   ${o.out}${resumedAt === undefined ? '' : ` (resumed at step ${resumedAt})`}`,
  ];
  return `${lines.join('\n')}\n`;
}
