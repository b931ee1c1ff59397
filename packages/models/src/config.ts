/** The two model families Loom builds. */
export type ModelPreset = 'llama' | 'gpt2';

export const MODEL_PRESETS: readonly ModelPreset[] = ['llama', 'gpt2'];

/**
 * Everything needed to rebuild a model's parameter list. `@loom/nn` declares a structurally identical
 * `TransformerConfig`, so the two are interchangeable without a dependency between the packages.
 */
export interface ModelConfig {
  preset: ModelPreset;
  vocabSize: number;
  dim: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  /** Width of the feed-forward layer. */
  hiddenDim: number;
  maxSeqLen: number;
  normEps: number;
  /** RoPE base (llama); gpt2 has learned positions and ignores it. */
  ropeTheta: number;
  /** The output classifier reuses `tok_embeddings.weight`. */
  tiedEmbeddings: boolean;
  /** Linear layers and norms have biases (gpt2). */
  bias: boolean;
}

/** The per-head width, `dim / numHeads`. */
export function headDim(config: ModelConfig): number {
  return config.dim / config.numHeads;
}

/** Width of the key and value projections, `numKvHeads * headDim`. */
export function kvDim(config: ModelConfig): number {
  return config.numKvHeads * headDim(config);
}

/** The integer sizes of a config. */
export type ConfigSize =
  | 'vocabSize'
  | 'dim'
  | 'numLayers'
  | 'numHeads'
  | 'numKvHeads'
  | 'hiddenDim'
  | 'maxSeqLen';

/**
 * The largest value Loom accepts for each size: far above any released model (the largest have a vocabulary of
 * about 256K, width 16384, 53248 hidden, 126 layers, 10M positions), and small enough that every size a config
 * implies (parameter counts, tensor bytes, a whole-context KV cache) is an exact safe integer, and that a hostile
 * header is refused before Loom builds a list of its tensors.
 */
export const CONFIG_LIMITS: Readonly<Record<ConfigSize, number>> = {
  vocabSize: 2 ** 24,
  dim: 2 ** 16,
  numLayers: 2 ** 12,
  numHeads: 2 ** 16,
  numKvHeads: 2 ** 16,
  hiddenDim: 2 ** 19,
  maxSeqLen: 2 ** 27,
};

/** Why a config does not describe a model Loom can build (empty when it does). */
export function modelConfigProblems(config: ModelConfig): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(CONFIG_LIMITS) as ConfigSize[]) {
    const value = config[key];
    if (!Number.isInteger(value) || value < 1)
      problems.push(`${key} must be a positive integer, got ${value}`);
    else if (value > CONFIG_LIMITS[key]) {
      problems.push(`${key}=${value} is over Loom's limit of ${CONFIG_LIMITS[key]}`);
    }
  }
  if (!(config.normEps > 0 && Number.isFinite(config.normEps))) {
    problems.push(`normEps must be a positive number, got ${config.normEps}`);
  }
  if (!(config.ropeTheta > 0 && Number.isFinite(config.ropeTheta))) {
    problems.push(`ropeTheta must be a positive number, got ${config.ropeTheta}`);
  }
  if (config.dim % config.numHeads !== 0) {
    problems.push(`dim=${config.dim} must be a multiple of numHeads=${config.numHeads}`);
  }
  if (config.numHeads % config.numKvHeads !== 0) {
    problems.push(`numHeads=${config.numHeads} must be a multiple of numKvHeads=${config.numKvHeads}`);
  }
  if (config.preset === 'llama' && Number.isInteger(headDim(config)) && headDim(config) % 2 !== 0) {
    problems.push(`RoPE rotates pairs, so headDim = dim/numHeads must be even, got ${headDim(config)}`);
  }
  if (config.preset === 'gpt2' && config.numKvHeads !== config.numHeads) {
    problems.push(`gpt2 has no grouped-query attention: numKvHeads=${config.numKvHeads} must equal numHeads`);
  }
  return problems;
}

/** Throws, naming `source`, unless the config describes a model Loom can build; lists every problem at once. */
export function checkModelConfig(config: ModelConfig, source: string): void {
  const problems = modelConfigProblems(config);
  if (problems.length > 0) {
    throw new Error(`${source}: invalid model config: ${problems.join('; ')}`);
  }
}

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
  ].join(' ');
}
