/**
 * A sparse mixture-of-experts feed-forward (Mixtral): a router picks `topK` of `experts` SwiGLU feed-forwards per
 * token.
 */
export interface MoeConfig {
  /** Number of experts E, each a SwiGLU feed-forward of the model's hiddenDim. */
  readonly experts: number;
  /** Experts each token is sent to, k (Mixtral: 2 of 8). */
  readonly topK: number;
  /** Weight of the load-balancing loss added to the training loss; absent is 0.01 (Switch Transformer). */
  readonly auxLossCoef?: number;
  /**
   * Rows each expert computes per forward, as a multiple of its fair share: capacity = ceil(factor · N · k / E) for
   * N tokens, at most N. Assignments past an expert's capacity are dropped (that expert adds nothing for that token).
   * Absent is 2; `experts / topK` or more never drops (capacity N, the dense cost).
   */
  readonly capacityFactor?: number;
}

/** The default weight of the load-balancing loss. */
export const DEFAULT_AUX_LOSS_COEF = 0.01;

/** The default capacity factor. */
export const DEFAULT_CAPACITY_FACTOR = 2;

/** Largest number of experts Loom accepts (released models use 8 to 256). */
const EXPERTS_LIMIT = 2 ** 12;

/** Why a MoE config is unusable (empty when it is fine). */
export function moeProblems(moe: MoeConfig): string[] {
  const problems: string[] = [];
  const { experts, topK, auxLossCoef, capacityFactor } = moe;
  if (!Number.isInteger(experts) || experts < 1 || experts > EXPERTS_LIMIT) {
    problems.push(`moe.experts must be an integer in [1, ${EXPERTS_LIMIT}], got ${experts}`);
  }
  if (!Number.isInteger(topK) || topK < 1 || topK > experts) {
    problems.push(`moe.topK must be an integer in [1, experts=${experts}], got ${topK}`);
  }
  if (auxLossCoef !== undefined && !(auxLossCoef >= 0 && Number.isFinite(auxLossCoef))) {
    problems.push(`moe.auxLossCoef must be a finite number >= 0 when given, got ${auxLossCoef}`);
  }
  if (capacityFactor !== undefined && !(capacityFactor > 0 && Number.isFinite(capacityFactor))) {
    problems.push(`moe.capacityFactor must be a finite number > 0 when given, got ${capacityFactor}`);
  }
  return problems;
}

/** Rows each expert computes for `tokens` tokens: ceil(factor · tokens · k / E), between 1 and `tokens`. */
export function expertCapacity(moe: MoeConfig, tokens: number): number {
  const factor = moe.capacityFactor ?? DEFAULT_CAPACITY_FACTOR;
  return Math.min(tokens, Math.max(1, Math.ceil((factor * tokens * moe.topK) / moe.experts)));
}
