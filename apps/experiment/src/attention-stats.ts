import { singularValues } from './singular-values';

/** Singular values below this fraction of the largest count as zero (numerical rank). */
export const RANK_TOLERANCE = 1e-3;

/** What one attention matrix [T, T] looks like. */
export interface AttentionStats {
  /** Singular values above RANK_TOLERANCE · σ_max. */
  readonly rank: number;
  /** exp of the entropy of the normalised singular values (Roy & Vetterli's effective rank). */
  readonly effectiveRank: number;
  /** Mean entropy of the rows (each a distribution over keys), in nats. */
  readonly rowEntropy: number;
  /** The singular values divided by the largest, largest first. */
  readonly spectrum: Float64Array;
}

/** Rank, effective rank and row entropy of the row-stochastic matrix `probs` [t, t] (row-major). */
export function attentionStats(probs: ArrayLike<number>, t: number): AttentionStats {
  const sigma = singularValues(probs, t, t);
  const top = sigma[0];
  const rank = sigma.filter((s) => s > RANK_TOLERANCE * top).length;
  const total = sigma.reduce((sum, s) => sum + s, 0);
  let spectral = 0;
  for (const s of sigma) if (s > 0) spectral -= (s / total) * Math.log(s / total);
  let entropy = 0;
  for (let row = 0; row < t; row++) {
    for (let col = 0; col < t; col++) {
      const p = probs[row * t + col];
      if (p > 0) entropy -= p * Math.log(p);
    }
  }
  return {
    rank,
    effectiveRank: Math.exp(spectral),
    rowEntropy: entropy / t,
    spectrum: sigma.map((s) => s / top),
  };
}
