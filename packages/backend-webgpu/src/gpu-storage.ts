import type { DataId, DType } from '@loom/tensor';

/** A tensor's storage on the device: a pooled buffer holding `size` elements of `dtype`. */
export class GpuStorage implements DataId {
  readonly backend = 'webgpu';
  /** Serial of the last command batch that used the buffer; it may return to the pool once that batch is done. */
  lastUse = 0;
  released = false;

  constructor(
    readonly buffer: GPUBuffer,
    readonly size: number,
    readonly dtype: DType,
  ) {}

  /** Bytes of the elements (the buffer may be larger). */
  get bytes(): number {
    return this.size * 4;
  }

  /** Bytes to bind: storage bindings may not be empty, so an empty tensor binds one element. */
  get bindingBytes(): number {
    return Math.max(4, this.bytes);
  }
}
