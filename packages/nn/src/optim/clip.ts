import { concat, matmul, scope, sizeOf, type Tensor } from '@loom/tensor';

/**
 * Scales gradients so their global L2 norm is at most `maxNorm`. Returns the new gradients
 * and the norm before clipping (a scalar tensor, so reading it is the caller's choice).
 */
export function clipGradNorm(grads: readonly Tensor[], maxNorm: number): { grads: Tensor[]; norm: Tensor } {
  if (grads.length === 0) throw new Error('clipGradNorm: expected at least one gradient, got none');
  return scope(() => {
    // Each gradient's sum of squares as one dot product g·g (a matrix-vector pass, no squared copy), then one
    // sum over all of them: 2 ops a gradient fewer than squaring, summing and adding scalar by scalar.
    const squares = grads.map((g) => {
      const flat = g.reshape([1, sizeOf(g.shape)]); // [1, n]
      return matmul(flat, flat, { transB: true }).reshape([1]); // [1]
    });
    const norm = concat(squares, 0).sum().sqrt();
    const scale = norm.add(1e-6).pow(-1).mul(maxNorm).minimum(1);
    return { grads: grads.map((g) => g.mul(scale)), norm };
  });
}
