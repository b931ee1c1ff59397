/** Element types Loom reads from and writes to checkpoint files, spelled as safetensors spells them. */
export type DType = 'F32' | 'F16' | 'BF16' | 'I32';

/** The float dtypes; all of them are widened to float32 in memory. */
export type FloatDType = Exclude<DType, 'I32'>;

export const DTYPES: readonly DType[] = ['F32', 'F16', 'BF16', 'I32'];

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<DType, number>> = { F32: 4, F16: 2, BF16: 2, I32: 4 };

/** A float tensor in the neutral in-memory form: row-major float32, weight matrices as [out, in]. */
export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** An integer tensor (for example trainer state); never a model weight. */
export interface NamedIntTensor {
  name: string;
  shape: number[];
  data: Int32Array;
}

/** Any tensor a safetensors file can hold in Loom. */
export type StoredTensor = NamedTensor | NamedIntTensor;
