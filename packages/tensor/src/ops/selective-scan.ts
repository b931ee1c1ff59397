import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { discretise, stack, states, step } from './scan-steps';
import { selectiveScanGrad } from './selective-scan-grad';

/** The scan written with primitives, one step of [B, D, N] elementwise ops per time step. */
function scanComposite(x: Tensor, delta: Tensor, a: Tensor, b: Tensor, c: Tensor, dSkip: Tensor): Tensor {
  return scope(() => {
    const [batch, steps, d] = x.shape;
    const n = a.shape[1];
    const { decay, input } = discretise(x, delta, a, b);
    const ys = states(decay, input).map((h, s) => h.mul(step(c, s).reshape([batch, 1, n])).sum(-1)); // T × [B, D]
    return stack(ys).reshape([batch, steps, d]).add(x.mul(dSkip)); // [B, T, D]
  });
}

interface ScanCase {
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly n: number;
  readonly label: string;
}

/**
 * Mamba's selective scan (S6) over x [B, T, D] with step sizes Δ [B, T, D] (already through
 * softplus, so positive), the state matrix A [D, N] (negative), the input-dependent B and C
 * [B, T, N] and the skip D [D]: h_t = exp(Δ_t A) ⊙ h_{t-1} + Δ_t B_t x_t from h_{-1} = 0,
 * y_t = C_t · h_t + D x_t; result [B, T, D]. Kernel:
 * `selectiveScan(x, delta, a, b, c, dSkip)`.
 */
export const selectiveScanOp = fusedOp({
  name: 'selectiveScan',
  inputs: ['x', 'delta', 'a', 'b', 'c', 'dSkip'],
  outputShape: ([x]) => x.shape,
  composite: scanComposite,
  /** All six gradients from one reverse-time scan (the fused selectiveScanGrad), cut out of its packed result. */
  gradient: {
    backward: ({ inputs, grad, needs }) =>
      scope(() => {
        const [x, delta, a, b, c, dSkip] = inputs;
        const packed = selectiveScanGrad(x, delta, a, b, c, dSkip, grad); // [2·BTD + DN + 2·BTN + D]
        const starts = inputs.map((_, i) => inputs.slice(0, i).reduce((sum, t) => sum + t.size, 0));
        return inputs.map((input, i) =>
          needs[i] ? packed.slice([starts[i]], [input.size]).reshape(input.shape) : undefined,
        );
      }),
  },
  cases: casesOver<ScanCase, []>(
    [
      { b: 1, t: 1, d: 1, n: 1, label: 'one step, one channel' },
      { b: 1, t: 3, d: 3, n: 2, label: 'small' },
      { b: 2, t: 7, d: 5, n: 4, label: 'odd sizes' },
      { b: 1, t: 33, d: 65, n: 16, label: 'channels past a workgroup of 64' },
      { b: 2, t: 64, d: 257, n: 8, label: 'channels past a workgroup of 256' },
    ],
    ({ b, t, d, n, label }) => ({
      label: `${label}: x [${b}, ${t}, ${d}], A [${d}, ${n}]`,
      inputs: [
        { shape: [b, t, d] },
        { shape: [b, t, d], dist: { kind: 'uniform', low: 0.001, high: 0.5 } },
        { shape: [d, n], dist: { kind: 'uniform', low: -4, high: -0.5 } },
        { shape: [b, t, n] },
        { shape: [b, t, n] },
        { shape: [d] },
      ],
      params: [],
      tol: REDUCTION,
    }),
  ),
});

/**
 * Mamba's selective scan: x and Δ [B, T, D] (Δ positive, e.g. after softplus), A [D, N],
 * B and C [B, T, N], D [D]; returns y [B, T, D] with h_t = exp(Δ_t A) ⊙ h_{t-1} + Δ_t B_t x_t
 * (h_{-1} = 0, h_t [D, N] per batch row) and y_t = C_t · h_t + D ⊙ x_t.
 */
export function selectiveScan(
  x: Tensor,
  delta: Tensor,
  a: Tensor,
  b: Tensor,
  c: Tensor,
  dSkip: Tensor,
): Tensor {
  sameBackend('selectiveScan', x, delta, a, b, c, dSkip);
  for (const t of [x, delta, a, b, c, dSkip]) assertDType('selectiveScan', t.dtype, ['f32']);
  const shapes = `x ${showShape(x.shape)}, delta ${showShape(delta.shape)}, A ${showShape(a.shape)}, B ${showShape(b.shape)}, C ${showShape(c.shape)}, D ${showShape(dSkip.shape)}`;
  if (x.rank !== 3 || a.rank !== 2 || b.rank !== 3 || c.rank !== 3 || dSkip.rank !== 1 || delta.rank !== 3) {
    throw new Error(
      `selectiveScan: expected x, delta [B, T, D], A [D, N], B, C [B, T, N] and D [D]; got ${shapes}`,
    );
  }
  const [batch, steps, d] = x.shape;
  const n = a.shape[1];
  const fits =
    delta.shape.every((v, i) => v === x.shape[i]) &&
    a.shape[0] === d &&
    [b, c].every((t) => t.shape[0] === batch && t.shape[1] === steps && t.shape[2] === n) &&
    dSkip.shape[0] === d;
  if (!fits) {
    throw new Error(
      `selectiveScan: shapes disagree; expected x, delta [${batch}, ${steps}, ${d}], A [${d}, N], B, C [${batch}, ${steps}, N] and D [${d}] with one N; got ${shapes}`,
    );
  }
  if (batch * steps * d * n === 0) {
    throw new Error(`selectiveScan: every size must be at least 1; got ${shapes}`);
  }
  return runFused(selectiveScanOp, [x, delta, a, b, c, dSkip], []);
}
