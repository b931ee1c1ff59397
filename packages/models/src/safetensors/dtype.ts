/**
 * Element types a safetensors file may hold that Loom reads and writes, spelled as the format
 * spells them. They name storage only: in memory every float is a Float32Array and every
 * integer an Int32Array (tensor's `DType` 'f32' | 'i32').
 */
export type SafetensorsDType = 'F32' | 'F16' | 'BF16' | 'I32';

/** The float storage types; all of them are widened to float32 when read. */
export type SafetensorsFloatDType = Exclude<SafetensorsDType, 'I32'>;

export const SAFETENSORS_DTYPES: readonly SafetensorsDType[] = ['F32', 'F16', 'BF16', 'I32'];

/** Bytes per element of each storage type. */
export const SAFETENSORS_DTYPE_BYTES: Readonly<Record<SafetensorsDType, number>> = {
  F32: 4,
  F16: 2,
  BF16: 2,
  I32: 4,
};
