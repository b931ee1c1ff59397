import { scope, type Tensor } from '@loom/tensor';

/**
 * Scales gradients so their global L2 norm is at most `maxNorm`. Returns the new gradients
 * and the norm before clipping (a scalar tensor, so reading it is the caller's choice).
 */
export function clipGradNorm(grads: readonly Tensor[], maxNorm: number): { grads: Tensor[]; norm: Tensor } {
  if (grads.length === 0) throw new Error('clipGradNorm: expected at least one gradient, got none');
  return scope(() => {
    const squares = grads.map((g) => g.mul(g).sum());
    const norm = squares.reduce((a, b) => a.add(b)).sqrt();
    const scale = norm.add(1e-6).pow(-1).mul(maxNorm).minimum(1);
    return { grads: grads.map((g) => g.mul(scale)), norm };
  });
}
