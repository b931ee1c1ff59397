import { type MoeConfig, moeProblems } from './moe/config';
import { type RopeScaling, ropeScalingProblems } from './rope-scaling';

/** The two model families Loom builds. */
export type Preset = 'llama' | 'gpt2';

/** Where the norm sits in each block. */
export type NormPlacement = 'pre' | 'post';

/** Everything that defines a TransformerLM's shape; the same names as checkpoint metadata. */
export interface TransformerConfig {
  readonly preset: Preset;
  readonly vocabSize: number;
  readonly dim: number;
  readonly numLayers: number;
  readonly numHeads: number;
  /** Key/value heads; equal to numHeads is multi-head, 1 is multi-query, between is grouped. */
  readonly numKvHeads: number;
  /** Width of the feed-forward layer. */
  readonly hiddenDim: number;
  readonly maxSeqLen: number;
  readonly normEps: number;
  readonly ropeTheta: number;
  /** How RoPE's frequencies are scaled for a longer context (llama preset); absent is plain RoPE. */
  readonly ropeScaling?: RopeScaling;
  /** The output projection reuses the token embedding. */
  readonly tiedEmbeddings: boolean;
  /** Linear layers and norms have biases (gpt2). */
  readonly bias: boolean;
  /**
   * Per-head width when it is not `dim / numHeads` (Qwen3 sets it explicitly); absent means `dim / numHeads`.
   * Read it through `headDim(config)`.
   */
  readonly headDim?: number;
  /** The query, key and value projections have biases though the other layers do not (Qwen2); absent is false. */
  readonly qkvBias?: boolean;
  /** Queries and keys each pass a per-head RMSNorm (weights of size headDim) before RoPE (Qwen3); absent is false. */
  readonly qkNorm?: boolean;
  /**
   * Sliding-window attention (Mistral): the token at position p attends only to positions in (p - W, p]; absent is
   * full attention. A KV cache then needs only W positions (a ring, `RingKVCache` of @loom/kvcache).
   */
  readonly slidingWindow?: number;
  /**
   * A sparse mixture-of-experts feed-forward in every block (Mixtral, llama preset): `experts` SwiGLU
   * feed-forwards of hiddenDim, `topK` per token; absent is one dense feed-forward.
   */
  readonly moe?: MoeConfig;
}

/** Options of a model that are not part of its weights' shape. */
export interface ModelOptions {
  readonly dropout?: number;
  readonly norm?: NormPlacement;
  /** Base seed of the weight initialisation. */
  readonly seed?: number;
  /**
   * How the weights start: 'random' (the preset's initialisation, the default) or 'zeros', for weights that are
   * overwritten at once (loading a checkpoint), so no random draw is paid for.
   */
  readonly init?: 'random' | 'zeros';
}

export type ConfigInput = Partial<TransformerConfig> &
  Pick<TransformerConfig, 'vocabSize' | 'dim' | 'numLayers' | 'numHeads' | 'maxSeqLen'>;

/**
 * Fills a config from a preset: llama (RMSNorm, RoPE, SwiGLU with hidden ≈ 8/3·dim rounded
 * up to a multiple of 32, untied) or gpt2 (LayerNorm with biases, learned positions, GELU MLP
 * of 4·dim, tied embeddings). Throws on inconsistent sizes.
 */
export function makeConfig(preset: Preset, input: ConfigInput): TransformerConfig {
  const llama = preset === 'llama';
  const config: TransformerConfig = {
    preset,
    numKvHeads: input.numKvHeads ?? input.numHeads,
    hiddenDim: input.hiddenDim ?? (llama ? Math.ceil((8 * input.dim) / 3 / 32) * 32 : 4 * input.dim),
    normEps: input.normEps ?? 1e-5,
    ropeTheta: input.ropeTheta ?? 10_000,
    tiedEmbeddings: input.tiedEmbeddings ?? !llama,
    bias: input.bias ?? !llama,
    ...input,
  };
  validateConfig(config);
  return config;
}

export const PRESETS: readonly Preset[] = ['llama', 'gpt2'];

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

/** The largest explicit headDim Loom accepts (released models use 64 to 256). */
const HEAD_DIM_LIMIT = 2 ** 14;

/** Why a config does not describe a model Loom can build (empty when it does). */
export function configProblems(config: TransformerConfig): string[] {
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
  if (config.ropeScaling !== undefined) {
    if (config.preset !== 'llama')
      problems.push(`ropeScaling needs RoPE (the llama preset), got ${config.preset}`);
    problems.push(...ropeScalingProblems(config.ropeScaling, config.maxSeqLen));
  }
  if (config.headDim === undefined) {
    if (config.dim % config.numHeads !== 0) {
      problems.push(
        `dim=${config.dim} must be a multiple of numHeads=${config.numHeads}, or headDim must be given`,
      );
    }
  } else if (!Number.isInteger(config.headDim) || config.headDim < 1) {
    problems.push(`headDim must be a positive integer, got ${config.headDim}`);
  } else if (config.headDim > HEAD_DIM_LIMIT) {
    problems.push(`headDim=${config.headDim} is over Loom's limit of ${HEAD_DIM_LIMIT}`);
  } else if (config.numHeads * config.headDim > CONFIG_LIMITS.hiddenDim) {
    problems.push(
      `numHeads * headDim = ${config.numHeads * config.headDim} is over Loom's limit of ${CONFIG_LIMITS.hiddenDim} for a projection's width`,
    );
  }
  for (const key of ['qkvBias', 'qkNorm'] as const) {
    const value: unknown = config[key];
    if (value !== undefined && typeof value !== 'boolean') {
      problems.push(`${key} must be true or false when given, got ${String(value)}`);
    }
  }
  if (config.qkNorm === true && config.preset !== 'llama') {
    problems.push(
      `qkNorm (per-head RMSNorm of queries and keys) needs the llama preset, got ${config.preset}`,
    );
  }
  if (
    config.slidingWindow !== undefined &&
    (!Number.isInteger(config.slidingWindow) || config.slidingWindow < 1)
  ) {
    problems.push(
      `slidingWindow must be a positive integer (positions each token attends to) when given, got ${config.slidingWindow}`,
    );
  }
  if (config.moe !== undefined) {
    if (config.preset !== 'llama')
      problems.push(`moe needs SwiGLU experts (the llama preset), got ${config.preset}`);
    problems.push(...moeProblems(config.moe));
  }
  if (config.numHeads % config.numKvHeads !== 0) {
    problems.push(`numHeads=${config.numHeads} must be a multiple of numKvHeads=${config.numKvHeads}`);
  }
  if (config.preset === 'llama' && Number.isInteger(headDim(config)) && headDim(config) % 2 !== 0) {
    problems.push(`RoPE rotates pairs, so headDim must be even, got ${headDim(config)}`);
  }
  return problems;
}

/** Throws, naming `source`, unless the config describes a model Loom can build; lists every problem at once. */
export function validateConfig(config: TransformerConfig, source = 'model config'): void {
  const problems = configProblems(config);
  if (problems.length > 0) throw new Error(`${source}: invalid model config: ${problems.join('; ')}`);
}

/** The per-head width: the config's `headDim` when given, else `dim / numHeads`. */
export function headDim(c: TransformerConfig): number {
  return c.headDim ?? c.dim / c.numHeads;
}

/** Width of the query projection and of the attention output, `numHeads * headDim`. */
export function qDim(c: TransformerConfig): number {
  return c.numHeads * headDim(c);
}

/** Whether the query, key and value projections have biases: every linear layer has them, or only these. */
export function qkvHasBias(c: TransformerConfig): boolean {
  return c.bias || c.qkvBias === true;
}

/** Width of the key and value projections, `numKvHeads * headDim`. */
export function kvDim(c: TransformerConfig): number {
  return c.numKvHeads * headDim(c);
}
