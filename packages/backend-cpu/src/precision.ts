/**
 * How the CPU backend stores f32-dtype tensors: 'f32' in Float32Array (in the WebAssembly heap
 * where available, the fast default), 'f64' in host Float64Array, so every kernel keeps float64
 * precision (for gradient checks and numerical references).
 */
export type CpuPrecision = 'f32' | 'f64';

export const CPU_PRECISIONS: readonly CpuPrecision[] = ['f32', 'f64'];

/** The host array of f32-dtype storage: Float32Array at precision 'f32', Float64Array at 'f64'. */
export type FloatArray = Float32Array | Float64Array;

/** Throws unless `value` is a CpuPrecision, naming the option and the allowed values. */
export function checkPrecision(value: unknown): CpuPrecision {
  const precision = CPU_PRECISIONS.find((p) => p === value);
  if (precision === undefined) {
    const shown = typeof value === 'string' ? `'${value}'` : String(value);
    throw new Error(
      `CpuBackend: option precision must be ${CPU_PRECISIONS.map((p) => `'${p}'`).join(' or ')}, got ${shown}`,
    );
  }
  return precision;
}
