/** The head-width fields of a model config: an explicit `headDim` (Qwen3) or dim / numHeads. */
export interface HeadShape {
  readonly dim: number;
  readonly numHeads: number;
  /** Per-head width when it is not dim / numHeads (Qwen3); absent means dim / numHeads. */
  readonly headDim?: number;
}

/** The width of one attention head: the config's `headDim` when it names one, else dim / numHeads. */
export function headDimOf(model: HeadShape): number {
  return model.headDim ?? model.dim / model.numHeads;
}
