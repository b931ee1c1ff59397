import type { TransformerConfig } from '@loom/nn';

/**
 * A model's shape as checkpoint files record it: `@loom/nn`'s TransformerConfig itself, so that one type and one
 * validator (`validateConfig`, with Loom's size limits) serve both the files and the model built from them.
 */
export type ModelConfig = TransformerConfig;

/** A one-line summary for messages: `llama dim=64 hidden=172 layers=5 heads=8 kvHeads=4 vocab=512 seqLen=512 tied`. */
export function describeConfig(config: ModelConfig): string {
  return [
    config.preset,
    `dim=${config.dim}`,
    `hidden=${config.hiddenDim}`,
    `layers=${config.numLayers}`,
    `heads=${config.numHeads}`,
    `kvHeads=${config.numKvHeads}`,
    `vocab=${config.vocabSize}`,
    `seqLen=${config.maxSeqLen}`,
    config.tiedEmbeddings ? 'tied' : 'untied',
    ...(config.headDim === undefined ? [] : [`headDim=${config.headDim}`]),
    ...(config.qkvBias ? ['qkvBias'] : []),
    ...(config.qkNorm ? ['qkNorm'] : []),
  ].join(' ');
}
