import { zeros } from '../creation';
import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { concat } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { discretise, stack, states, step } from './scan-steps';

/**
 * The gradients by a reverse-time scan, flattened and joined in input order. With
 * a_t = exp(Δ_t A), the state's adjoint is dh_t = g_t C_t + a_{t+1} ⊙ dh_{t+1}; with
 * P = dh_t ⊙ h_{t-1} ⊙ a_t and Q = Σ_n dh_t B_t: dx = Q Δ + D g, dΔ = Q x + Σ_n P A,
 * dA = Σ_{b,t} P Δ, dB = Σ_d dh Δ x, dC = Σ_d g h, dD = Σ_{b,t} g x. The states are
 * recomputed, not saved.
 */
function gradComposite(
  x: Tensor,
  delta: Tensor,
  a: Tensor,
  b: Tensor,
  c: Tensor,
  dSkip: Tensor,
  g: Tensor,
): Tensor {
  return scope(() => {
    const [batch, steps, d] = x.shape;
    const n = a.shape[1];
    const { decay, input } = discretise(x, delta, a, b);
    const h = stack(states(decay, input)); // [B, T, D, N]
    const adjoints: Tensor[] = new Array(steps);
    let dh: Tensor | undefined;
    for (let s = steps - 1; s >= 0; s--) {
      const direct = step(g, s)
        .reshape([batch, d, 1])
        .mul(step(c, s).reshape([batch, 1, n])); // [B, D, N]
      dh = dh === undefined ? direct : direct.add(step(decay, s + 1).mul(dh));
      adjoints[s] = dh;
    }
    const dH = stack(adjoints); // [B, T, D, N]
    const first = zeros([batch, 1, d, n], { backend: x.backend });
    const hPrev = concat([first, h.slice([0, 0, 0, 0], [batch, steps - 1, d, n])], 1); // [B, T, D, N]
    const p = dH.mul(hPrev).mul(decay); // [B, T, D, N]
    const q = dH.mul(b.reshape([batch, steps, 1, n])).sum(-1); // [B, T, D]
    const grads = [
      q.mul(delta).add(g.mul(dSkip)),
      q.mul(x).add(p.mul(a).sum(-1)),
      p.mul(delta.reshape([batch, steps, d, 1])).sum([0, 1]),
      dH.mul(delta.mul(x).reshape([batch, steps, d, 1])).sum(2),
      g.reshape([batch, steps, d, 1]).mul(h).sum(2),
      g.mul(x).sum([0, 1]),
    ];
    return concat(
      grads.map((t) => t.reshape([t.size])),
      0,
    );
  });
}

interface GradCase {
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly n: number;
}

/**
 * The gradients of selectiveScan(x, Δ, A, B, C, D) for the output gradient g [B, T, D]: dx, dΔ,
 * dA, dB, dC and dD, each flattened, joined in that order ([2·B·T·D + D·N + 2·B·T·N + D]).
 * Kernel: `selectiveScanGrad(x, delta, a, b, c, dSkip, grad)`. It runs inside selectiveScan's
 * backward rule, so autograd differentiates it (never needed in training) through its composite.
 */
export const selectiveScanGradOp = fusedOp({
  name: 'selectiveScanGrad',
  inputs: ['x', 'delta', 'a', 'b', 'c', 'dSkip', 'grad'],
  outputShape: ([x, , a]) => {
    const [batch, steps, d] = x.shape;
    const n = a.shape[1];
    return [2 * batch * steps * d + d * n + 2 * batch * steps * n + d];
  },
  composite: gradComposite,
  gradient: 'through-composite',
  cases: casesOver<GradCase, []>(
    [
      { b: 1, t: 1, d: 1, n: 1 },
      { b: 2, t: 7, d: 5, n: 4 },
      { b: 1, t: 9, d: 65, n: 16 },
      { b: 2, t: 5, d: 257, n: 8 },
    ],
    ({ b, t, d, n }) => ({
      label: `x [${b}, ${t}, ${d}], A [${d}, ${n}]`,
      inputs: [
        { shape: [b, t, d] },
        { shape: [b, t, d], dist: { kind: 'uniform', low: 0.001, high: 0.5 } },
        { shape: [d, n], dist: { kind: 'uniform', low: -4, high: -0.5 } },
        { shape: [b, t, n] },
        { shape: [b, t, n] },
        { shape: [d] },
        { shape: [b, t, d] },
      ],
      params: [],
      tol: { atol: 2e-4, rtol: 2e-4 },
    }),
  ),
});

/** The packed input gradients of `selectiveScan(x, delta, a, b, c, dSkip)` for the output gradient `grad`. */
export function selectiveScanGrad(
  x: Tensor,
  delta: Tensor,
  a: Tensor,
  b: Tensor,
  c: Tensor,
  dSkip: Tensor,
  grad: Tensor,
): Tensor {
  sameBackend('selectiveScanGrad', x, delta, a, b, c, dSkip, grad);
  assertDType('selectiveScanGrad', grad.dtype, ['f32']);
  if (!shapesEqual(grad.shape, x.shape)) {
    throw new Error(
      `selectiveScanGrad: grad ${showShape(grad.shape)} must have the shape of x ${showShape(x.shape)}`,
    );
  }
  return runFused(selectiveScanGradOp, [x, delta, a, b, c, dSkip, grad], []);
}
