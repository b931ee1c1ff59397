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
