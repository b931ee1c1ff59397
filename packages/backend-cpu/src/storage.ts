import { allocHost, type DType, type HostArray } from '@loom/tensor';

/**
 * Host storage of one tensor. Kernels take views (`f32`, `i32`, `values`) at the start of a
 * call, after allocating their outputs, and do not keep them across calls.
 */
export class CpuStorage {
  readonly #values: HostArray;

  constructor(
    readonly dtype: DType,
    readonly length: number,
  ) {
    this.#values = allocHost(dtype, length);
  }

  get values(): HostArray {
    return this.#values;
  }

  get f32(): Float32Array {
    if (!(this.#values instanceof Float32Array)) throw new Error(`expected f32 storage, got ${this.dtype}`);
    return this.#values;
  }

  get i32(): Int32Array {
    if (!(this.#values instanceof Int32Array)) throw new Error(`expected i32 storage, got ${this.dtype}`);
    return this.#values;
  }

  get bytes(): number {
    return this.length * 4;
  }

  /** Returns the memory to its allocator; the storage must not be used afterwards. */
  free(): void {}
}
