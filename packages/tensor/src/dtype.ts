/** Element types a tensor may hold. `f16` is reserved for a later backend feature. */
export type DType = 'f32' | 'i32';

/**
 * The typed array that holds the values of each dtype on the host: f32 values arrive as a
 * Float64Array from a backend that stores them in float64 (CpuBackend with precision 'f64').
 */
export type TypedArrayFor<D extends DType> = D extends 'f32' ? Float32Array | Float64Array : Int32Array;

/** Any host array a tensor's values can be read into or created from. */
export type HostArray = Float32Array | Float64Array | Int32Array;

/** Bytes per element of a dtype. */
export function bytesPerElement(dtype: DType): number {
  switch (dtype) {
    case 'f32':
    case 'i32':
      return 4;
  }
}

/** Allocates a zeroed host array of the dtype. */
export function allocHost(dtype: DType, size: number): HostArray {
  return dtype === 'f32' ? new Float32Array(size) : new Int32Array(size);
}

/** Throws unless `a` and `b` share a dtype, naming the op and both dtypes. */
export function assertSameDType(op: string, a: DType, b: DType): void {
  if (a !== b) {
    throw new Error(`${op}: dtype mismatch, got ${a} and ${b}; cast one operand with .cast('${a}') first`);
  }
}

/** Throws unless `dtype` is one of `allowed`, naming the op. */
export function assertDType(op: string, dtype: DType, allowed: readonly DType[]): void {
  if (!allowed.includes(dtype)) {
    throw new Error(`${op}: expected dtype ${allowed.join(' or ')}, got ${dtype}; cast the input first`);
  }
}
