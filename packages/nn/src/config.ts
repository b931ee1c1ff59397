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
  /** The output projection reuses the token embedding. */
  readonly tiedEmbeddings: boolean;
  /** Linear layers and norms have biases (gpt2). */
  readonly bias: boolean;
}

/** Options of a model that are not part of its weights' shape. */
export interface ModelOptions {
  readonly dropout?: number;
  readonly norm?: NormPlacement;
  /** Base seed of the weight initialisation. */
  readonly seed?: number;
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

export function validateConfig(c: TransformerConfig): void {
  const positive = [
    'vocabSize',
    'dim',
    'numLayers',
    'numHeads',
    'numKvHeads',
    'hiddenDim',
    'maxSeqLen',
  ] as const;
  for (const key of positive) {
    if (!Number.isInteger(c[key]) || c[key] <= 0) {
      throw new Error(`model config: ${key} must be a positive integer, got ${c[key]}`);
    }
  }
  if (c.dim % c.numHeads !== 0) {
    throw new Error(`model config: dim ${c.dim} must be divisible by numHeads ${c.numHeads}`);
  }
  if (c.numHeads % c.numKvHeads !== 0) {
    throw new Error(`model config: numKvHeads ${c.numKvHeads} must divide numHeads ${c.numHeads}`);
  }
  if (c.preset === 'llama' && (c.dim / c.numHeads) % 2 !== 0) {
    throw new Error(`model config: RoPE needs an even head size, got ${c.dim / c.numHeads}`);
  }
}

export function headDim(c: TransformerConfig): number {
  return c.dim / c.numHeads;
}
