import type { MambaConfig, TransformerConfig } from '@loom/nn';

/**
 * A model's shape as checkpoint files record it: `@loom/nn`'s TransformerConfig itself, so that one type and one
 * validator (`validateConfig`, with Loom's size limits) serve both the files and the model built from them.
 */
export type ModelConfig = TransformerConfig;

/**
 * What a Loom checkpoint may hold: a transformer (`ModelConfig`, no `arch` key) or a Mamba model
 * (`@loom/nn`'s MambaConfig, `arch: 'mamba'`), told apart by `isMambaConfig`.
 */
export type CheckpointConfig = ModelConfig | MambaConfig;

/** Whether a checkpoint's config describes a Mamba model rather than a transformer. */
export function isMambaConfig(config: CheckpointConfig): config is MambaConfig {
  return 'arch' in config && config.arch === 'mamba';
}

/**
 * A one-line summary for messages: `llama dim=64 hidden=172 layers=5 heads=8 kvHeads=4 vocab=512 seqLen=512 tied`,
 * or for Mamba `mamba dim=64 layers=2 state=16 expand=2 conv=4 dtRank=4 vocab=512 tied`.
 */
export function describeConfig(config: CheckpointConfig): string {
  if (isMambaConfig(config)) {
    const { dim, numLayers, stateSize, expand, convWidth, dtRank, vocabSize } = config;
    return [
      `mamba dim=${dim} layers=${numLayers} state=${stateSize} expand=${expand} conv=${convWidth}`,
      `dtRank=${dtRank} vocab=${vocabSize} ${config.tiedEmbeddings ? 'tied' : 'untied'}`,
    ].join(' ');
  }
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
    ...(config.slidingWindow === undefined ? [] : [`slidingWindow=${config.slidingWindow}`]),
    ...(config.moe === undefined ? [] : [`experts=${config.moe.experts} topK=${config.moe.topK}`]),
  ].join(' ');
}
