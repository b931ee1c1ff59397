/** Everything that defines a MambaLM's shape (the names follow Mamba's, in camelCase). */
export interface MambaConfig {
  readonly arch: 'mamba';
  readonly vocabSize: number;
  /** Width of the residual stream (Mamba's d_model). */
  readonly dim: number;
  readonly numLayers: number;
  /** Size N of each channel's state (d_state). */
  readonly stateSize: number;
  /** Inner width = expand · dim (Mamba uses 2). */
  readonly expand: number;
  /** Width of the causal depthwise convolution (d_conv). */
  readonly convWidth: number;
  /** Rank R of the step-size projection (dt_rank; Mamba's default ceil(dim / 16)). */
  readonly dtRank: number;
  readonly normEps: number;
  /** The output projection reuses the token embedding. */
  readonly tiedEmbeddings: boolean;
}

/** What a caller must give; the rest takes Mamba's defaults. */
export type MambaConfigInput = Partial<Omit<MambaConfig, 'arch'>> &
  Pick<MambaConfig, 'vocabSize' | 'dim' | 'numLayers'>;

/** The sizes of a config that are positive integers, with Loom's limits. */
const MAMBA_LIMITS = {
  vocabSize: 2 ** 24,
  dim: 2 ** 16,
  numLayers: 2 ** 12,
  stateSize: 2 ** 10,
  expand: 2 ** 4,
  convWidth: 2 ** 6,
  dtRank: 2 ** 16,
} as const satisfies Partial<Record<keyof MambaConfig, number>>;

/** Width of the mixer's inner stream: expand · dim. */
export function innerDim(config: MambaConfig): number {
  return config.expand * config.dim;
}

/**
 * Fills a Mamba config with Mamba's defaults: stateSize 16, expand 2, convWidth 4,
 * dtRank ceil(dim / 16), normEps 1e-5, tied embeddings. Throws on invalid sizes.
 */
export function makeMambaConfig(input: MambaConfigInput): MambaConfig {
  const config: MambaConfig = {
    arch: 'mamba',
    stateSize: 16,
    expand: 2,
    convWidth: 4,
    dtRank: Math.ceil(input.dim / 16),
    normEps: 1e-5,
    tiedEmbeddings: true,
    ...input,
  };
  validateMambaConfig(config);
  return config;
}

/** Why a config does not describe a MambaLM Loom can build (empty when it does). */
export function mambaConfigProblems(config: MambaConfig): string[] {
  const problems: string[] = [];
  if (config.arch !== 'mamba') problems.push(`arch must be 'mamba', got ${JSON.stringify(config.arch)}`);
  for (const [key, limit] of Object.entries(MAMBA_LIMITS) as [keyof typeof MAMBA_LIMITS, number][]) {
    const value = config[key];
    if (!Number.isInteger(value) || value < 1)
      problems.push(`${key} must be a positive integer, got ${value}`);
    else if (value > limit) problems.push(`${key}=${value} is over Loom's limit of ${limit}`);
  }
  if (!(config.normEps > 0 && Number.isFinite(config.normEps))) {
    problems.push(`normEps must be a positive number, got ${config.normEps}`);
  }
  if (typeof config.tiedEmbeddings !== 'boolean') {
    problems.push(`tiedEmbeddings must be true or false, got ${config.tiedEmbeddings}`);
  }
  return problems;
}

/** Throws, listing every problem, unless the config describes a MambaLM Loom can build. */
export function validateMambaConfig(config: MambaConfig, source = 'mamba config'): void {
  const problems = mambaConfigProblems(config);
  if (problems.length > 0) throw new Error(`${source}: invalid Mamba config: ${problems.join('; ')}`);
}

/** Number of parameters of a MambaLM with this config. */
export function mambaParameterCount(config: MambaConfig): number {
  const { dim, stateSize: n, convWidth, dtRank: r, vocabSize } = config;
  const e = innerDim(config);
  const mixer =
    dim * 2 * e + // in_proj
    e * convWidth +
    e + // conv1d weight and bias
    e * (r + 2 * n) + // x_proj
    r * e +
    e + // dt_proj weight and bias
    e * n + // A_log
    e + // D
    e * dim; // out_proj
  const block = mixer + dim; // + the block's RMSNorm
  const output = config.tiedEmbeddings ? 0 : vocabSize * dim;
  return vocabSize * dim + config.numLayers * block + dim + output;
}
