import { concat, matmul, scope, type Tensor } from '@loom/tensor';

/**
 * Scales gradients so their global L2 norm is at most `maxNorm`. Returns the new gradients
 * and the norm before clipping (a scalar tensor, so reading it is the caller's choice).
 * Each gradient's sum of squares is one dot product of its values with themselves, and the
 * sums are added in one reduction: two ops a gradient fewer than squaring, summing and adding
 * them one by one (a model's dozens of small tensors made hundreds of calls a step).
 */
export function clipGradNorm(grads: readonly Tensor[], maxNorm: number): { grads: Tensor[]; norm: Tensor } {
  if (grads.length === 0) throw new Error('clipGradNorm: expected at least one gradient, got none');
  return scope(() => {
    const squares = grads.map((g) => {
      const row = g.reshape([1, g.size]); // [1, n]
      return matmul(row, row, { transB: true }).reshape([1]); // [1]
    });
    const norm = concat(squares, 0).sum().sqrt(); // []
    const scale = norm.add(1e-6).pow(-1).mul(maxNorm).minimum(1);
    return { grads: grads.map((g) => g.mul(scale)), norm };
  });
}
