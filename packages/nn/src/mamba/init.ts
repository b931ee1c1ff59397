import { type Backend, tensor, uniformAt } from '@loom/tensor';

/** Values uniform in (-bound, bound) from a seeded draw. */
export function uniformInit(shape: readonly number[], bound: number, seed: number, backend: Backend) {
  const size = shape.reduce((a, b) => a * b, 1);
  const values = Float32Array.from({ length: size }, (_, i) => (2 * uniformAt(seed, i) - 1) * bound);
  return tensor(values, shape, { backend });
}

/**
 * Mamba's step-size bias: softplus⁻¹(dt) for dt log-uniform in [dtMin, dtMax] (0.001 and 0.1),
 * floored at 1e-4, so the initial steps softplus(bias) span that range. [inner].
 */
export function dtBiasInit(inner: number, seed: number, backend: Backend, dtMin = 0.001, dtMax = 0.1) {
  const values = Float32Array.from({ length: inner }, (_, i) => {
    const dt = Math.max(
      1e-4,
      Math.exp(uniformAt(seed, i) * (Math.log(dtMax) - Math.log(dtMin)) + Math.log(dtMin)),
    );
    return dt + Math.log(-Math.expm1(-dt)); // softplus⁻¹(dt) = log(exp(dt) - 1)
  });
  return tensor(values, [inner], { backend });
}

/** Mamba's A_log [inner, N]: log(1..N) in every row, so A = -exp(A_log) = -[1, 2, ..., N]. */
export function aLogInit(inner: number, n: number, backend: Backend) {
  const values = Float32Array.from({ length: inner * n }, (_, i) => Math.log(1 + (i % n)));
  return tensor(values, [inner, n], { backend });
}
