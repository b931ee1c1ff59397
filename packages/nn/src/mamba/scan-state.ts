import { scope, selectiveScan, type Tensor, tensor } from '@loom/tensor';

/** The [T, T] matrix M with M[r, t] = 1 where `keep(r, t)`, else 0. */
function mask(steps: number, keep: (r: number, t: number) => boolean, like: Tensor): Tensor {
  const values = new Float32Array(steps * steps);
  for (let r = 0; r < steps; r++) for (let t = 0; t < steps; t++) values[r * steps + t] = keep(r, t) ? 1 : 0;
  return tensor(values, [steps, steps], { backend: like.backend });
}

/**
 * The selective scan continued from a state h0 [B, D, N] (the recurrent form Mamba generates
 * with): returns y [B, T, D] and the state after the last step, h_T [B, D, N]. With
 * S_t = Σ_{r≤t} Δ_r, the state's part of the output is y0_t = C_t · (exp(S_t A) ⊙ h0), and
 * h_T = exp(S_T A) ⊙ h0 + Σ_s exp((S_T - S_s) A) ⊙ Δ_s B_s x_s, the sums over later steps
 * taken directly (not as differences) by a matmul with a triangular mask. For one token
 * (decode) it is the recurrence step itself; for a prompt it is the fused scan plus O(B·T·D·N)
 * elementwise work, and equals stepping the tokens one by one.
 */
export function scanFrom(
  x: Tensor,
  delta: Tensor,
  a: Tensor,
  b: Tensor,
  c: Tensor,
  dSkip: Tensor,
  h0: Tensor,
): { y: Tensor; h: Tensor } {
  return scope(() => {
    const [batch, steps, d] = x.shape;
    const n = a.shape[1];
    if (steps === 1) {
      // One decode step: the recurrence itself, h = exp(Δ A) ⊙ h0 + Δ B x, y = C · h + D x.
      const dt = delta.reshape([batch, d, 1]); // [B, D, 1]
      const h = dt
        .mul(a)
        .exp()
        .mul(h0)
        .add(dt.mul(x.reshape([batch, d, 1])).mul(b.reshape([batch, 1, n]))); // [B, D, N]
      const y = h
        .mul(c.reshape([batch, 1, n]))
        .sum(-1)
        .add(x.reshape([batch, d]).mul(dSkip)); // [B, D]
      return { y: y.reshape([batch, 1, d]), h };
    }
    const deltaT = delta.permute([0, 2, 1]); // [B, D, T]
    const upTo = deltaT.matmul(mask(steps, (r, t) => r <= t, x)); // [B, D, T]: Σ_{r≤t} Δ_r
    const after = deltaT.matmul(mask(steps, (r, s) => r > s, x)); // [B, D, T]: Σ_{r>s} Δ_r
    const toAxis = (s: Tensor) => s.permute([0, 2, 1]).reshape([batch, steps, d, 1]); // [B, T, D, 1]
    const start = h0.reshape([batch, 1, d, n]); // [B, 1, D, N]
    const fromStart = toAxis(upTo).mul(a).exp().mul(start); // [B, T, D, N]
    const y = selectiveScan(x, delta, a, b, c, dSkip).add(
      fromStart.mul(c.reshape([batch, steps, 1, n])).sum(-1),
    );
    const inputs = toAxis(after)
      .mul(a)
      .exp()
      .mul(delta.mul(x).reshape([batch, steps, d, 1]))
      .mul(b.reshape([batch, steps, 1, n])); // [B, T, D, N]
    const last = fromStart.slice([0, steps - 1, 0, 0], [batch, 1, d, n]).reshape([batch, d, n]); // [B, D, N]
    return { y, h: inputs.sum(1).add(last) };
  });
}
