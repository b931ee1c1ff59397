import { concat } from '../movement';
import type { Tensor } from '../tensor';

/**
 * The discretised inputs of the scan, both [B, T, D, N]: the decay exp(Δ_t A) and the input
 * Δ_t B_t x_t (Mamba's zero-order hold for A, Euler step for B).
 */
export function discretise(x: Tensor, delta: Tensor, a: Tensor, b: Tensor): { decay: Tensor; input: Tensor } {
  const [batch, steps, d] = x.shape;
  const n = a.shape[1];
  const decay = delta.reshape([batch, steps, d, 1]).mul(a).exp(); // [B, T, D, N]
  const input = delta
    .mul(x)
    .reshape([batch, steps, d, 1])
    .mul(b.reshape([batch, steps, 1, n])); // [B, T, D, N]
  return { decay, input };
}

/** Step s of a [B, T, ...] tensor, keeping the other axes: [B, ...]. */
export function step(t: Tensor, s: number): Tensor {
  const [batch, , ...rest] = t.shape;
  return t.slice([0, s, ...rest.map(() => 0)], [batch, 1, ...rest]).reshape([batch, ...rest]);
}

/** Stacks T tensors [B, ...] along a new axis 1: [B, T, ...]. */
export function stack(ts: readonly Tensor[]): Tensor {
  return concat(
    ts.map((t) => t.reshape([t.shape[0], 1, ...t.shape.slice(1)])),
    1,
  );
}

/** The states h_t [B, D, N] of every step, in order: h_t = decay_t ⊙ h_{t-1} + input_t from h_{-1} = 0. */
export function states(decay: Tensor, input: Tensor): Tensor[] {
  const hs: Tensor[] = [];
  let h = step(input, 0);
  hs.push(h);
  for (let s = 1; s < decay.shape[1]; s++) {
    h = step(decay, s).mul(h).add(step(input, s));
    hs.push(h);
  }
  return hs;
}
