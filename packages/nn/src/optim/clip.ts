import { scope, sumSquaresInto, type Tensor, zeros } from '@loom/tensor';

/**
 * The global L2 norm of `grads` as a scalar tensor: each gradient's sum of squares written into its own slot of one
 * vector (`sumSquaresInto`: on the CPU one dot product g·g, no squared copy; on WebGPU one reduction, no copy into a
 * concatenation), then one sum over the slots.
 */
export function gradNorm(grads: readonly Tensor[]): Tensor {
  if (grads.length === 0) throw new Error('gradNorm: expected at least one gradient, got none');
  return scope(() => {
    const totals = zeros([grads.length], { backend: grads[0].backend }); // [N]
    grads.forEach((g, i) => {
      sumSquaresInto(totals, g, i);
    });
    return totals.sum().sqrt();
  });
}

/**
 * The factor that brings gradients of global norm `norm` to a norm of at most `maxNorm`:
 * min(1, maxNorm / (norm + 1e-6)), as PyTorch's clip_grad_norm_. Pass it to `Optimizer.step` as its gradScale
 * instead of scaling every gradient.
 */
export function clipFactor(norm: number, maxNorm: number): number {
  return Math.min(1, maxNorm / (norm + 1e-6));
}

/**
 * `clipFactor` of `grads` at `maxNorm`, their norm read back (one scalar) and released: the gradScale a training loop
 * passes to `Optimizer.step` when it reads the norm for nothing else.
 */
export async function readClipFactor(grads: readonly Tensor[], maxNorm: number): Promise<number> {
  const norm = gradNorm(grads);
  try {
    return clipFactor(await norm.item(), maxNorm);
  } finally {
    norm.dispose();
  }
}

/**
 * Scales gradients so their global L2 norm is at most `maxNorm`. Returns the new gradients
 * and the norm before clipping (a scalar tensor, so reading it is the caller's choice). A training loop that reads
 * the norm anyway saves a pass over every gradient with `gradNorm`, `clipFactor` and `Optimizer.step`'s gradScale.
 */
export function clipGradNorm(grads: readonly Tensor[], maxNorm: number): { grads: Tensor[]; norm: Tensor } {
  if (grads.length === 0) throw new Error('clipGradNorm: expected at least one gradient, got none');
  return scope(() => {
    const norm = gradNorm(grads);
    const scale = norm.add(1e-6).pow(-1).mul(maxNorm).minimum(1);
    return { grads: grads.map((g) => g.mul(scale)), norm };
  });
}
