import { type FusedKernels, type Shape, sizeOf } from '@loom/tensor';
import type { FloatArray } from '../precision';
import type { CpuKernelContext } from './kernel-context';

/**
 * Mamba's selective scan in plain loops (JavaScript: the T steps of each channel are
 * sequential and N is small, so there is no vector width to fill): for each batch row and
 * channel d, the state h [N] runs h_n = exp(Δ_t A_dn) h_n + Δ_t B_tn x_t and
 * y_t = Σ_n C_tn h_n + D_d x_t. x, Δ, y [B, T, D]; A [D, N]; B, C [B, T, N]; D [D].
 * Sums run in float64 whatever the storage precision.
 */
export function selectiveScanKernel(
  x: FloatArray,
  delta: FloatArray,
  a: FloatArray,
  bIn: FloatArray,
  c: FloatArray,
  dSkip: FloatArray,
  xShape: Shape,
  n: number,
  out: FloatArray,
): void {
  const [batch, steps, d] = xShape;
  const h = new Float64Array(n);
  for (let bi = 0; bi < batch; bi++) {
    for (let di = 0; di < d; di++) {
      h.fill(0);
      for (let t = 0; t < steps; t++) {
        const at = (bi * steps + t) * d + di;
        const row = (bi * steps + t) * n;
        const dt = delta[at];
        const u = dt * x[at];
        let y = 0;
        for (let k = 0; k < n; k++) {
          h[k] = Math.exp(dt * a[di * n + k]) * h[k] + u * bIn[row + k];
          y += c[row + k] * h[k];
        }
        out[at] = y + dSkip[di] * x[at];
      }
    }
  }
}

/**
 * The gradients of the selective scan for the output gradient g [B, T, D], packed as
 * selectiveScanGrad returns them: dx, dΔ [B, T, D], dA [D, N], dB, dC [B, T, N], dD [D], each
 * flattened, in that order. Per batch row and channel: the states and decays [T, N] forward, then a
 * reverse-time pass with the adjoint dh = g_t C_t + exp(Δ_{t+1} A) dh_{t+1}, adding each step's
 * share to the sums over channels (dB, dC) and over batch and time (dA, dD).
 */
export function selectiveScanGradKernel(
  x: FloatArray,
  delta: FloatArray,
  a: FloatArray,
  bIn: FloatArray,
  c: FloatArray,
  dSkip: FloatArray,
  g: FloatArray,
  xShape: Shape,
  n: number,
  out: FloatArray,
): void {
  const [batch, steps, d] = xShape;
  const btd = batch * steps * d;
  const btn = batch * steps * n;
  const [dx, dDelta, dA, dB, dC] = [0, btd, 2 * btd, 2 * btd + d * n, 2 * btd + d * n + btn];
  const dD = dC + btn;
  out.fill(0);
  const h = new Float64Array(steps * n);
  const decays = new Float64Array(steps * n);
  const dh = new Float64Array(n);
  for (let bi = 0; bi < batch; bi++) {
    for (let di = 0; di < d; di++) {
      for (let t = 0; t < steps; t++) {
        const at = (bi * steps + t) * d + di;
        const row = (bi * steps + t) * n;
        const u = delta[at] * x[at];
        for (let k = 0; k < n; k++) {
          const prev = t > 0 ? h[(t - 1) * n + k] : 0;
          decays[t * n + k] = Math.exp(delta[at] * a[di * n + k]);
          h[t * n + k] = decays[t * n + k] * prev + u * bIn[row + k];
        }
      }
      dh.fill(0);
      for (let t = steps - 1; t >= 0; t--) {
        const at = (bi * steps + t) * d + di;
        const row = (bi * steps + t) * n;
        const dt = delta[at];
        const gt = g[at];
        let q = 0;
        let dDeltaA = 0;
        for (let k = 0; k < n; k++) {
          const ak = a[di * n + k];
          const decay = decays[t * n + k];
          dh[k] += gt * c[row + k];
          const prev = t > 0 ? h[(t - 1) * n + k] : 0;
          const p = dh[k] * prev * decay;
          q += dh[k] * bIn[row + k];
          dDeltaA += p * ak;
          out[dA + di * n + k] += p * dt;
          out[dB + row + k] += dh[k] * dt * x[at];
          out[dC + row + k] += gt * h[t * n + k];
          dh[k] *= decay; // the part of dh_{t-1} carried back through h_t = decay · h_{t-1} + ...
        }
        out[dx + at] = q * dt + dSkip[di] * gt;
        out[dDelta + at] = q * x[at] + dDeltaA;
        out[dD + di] += gt * x[at];
      }
    }
  }
}

/** The selective scan and its gradients, in the JavaScript kernels above. */
export function selectiveScanKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'selectiveScan' | 'selectiveScanGrad'> {
  return {
    selectiveScan: (x, delta, a, b, c, d) =>
      ctx.out(sizeOf(x.shape), (o) => {
        const [xv, dv, av, bv, cv, sv] = [x, delta, a, b, c, d].map((t) => ctx.f32(t));
        selectiveScanKernel(xv, dv, av, bv, cv, sv, x.shape, a.shape[1], o.f32);
      }),
    selectiveScanGrad: (x, delta, a, b, c, d, g) =>
      ctx.out(2 * sizeOf(x.shape) + sizeOf(a.shape) + 2 * sizeOf(b.shape) + d.shape[0], (o) => {
        const [xv, dv, av, bv, cv, sv, gv] = [x, delta, a, b, c, d, g].map((t) => ctx.f32(t));
        selectiveScanGradKernel(xv, dv, av, bv, cv, sv, gv, x.shape, a.shape[1], o.f32);
      }),
  };
}
