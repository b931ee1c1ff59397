import type { DataId, DType } from '@loom/tensor';

/**
 * A tensor's storage on the device: a pooled buffer holding `size` elements of `dtype`, or none yet for zeros not yet
 * used (GpuRuntime.zeros: the runtime gives them a buffer and fills it at their first use).
 */
export class GpuStorage implements DataId {
  readonly backend = 'webgpu';
  /** Serial of the last command batch that used the buffer; it may return to the pool once that batch is done. */
  lastUse = 0;
  released = false;
  #buffer: GPUBuffer | undefined;

  constructor(
    buffer: GPUBuffer | undefined,
    readonly size: number,
    readonly dtype: DType,
  ) {
    this.#buffer = buffer;
  }

  /** The buffer; the runtime gives zeros theirs before any use (see `attached`). */
  get buffer(): GPUBuffer {
    if (this.#buffer === undefined)
      throw new Error('webgpu: zeros used before the runtime gave them a buffer');
    return this.#buffer;
  }

  /** Whether the storage has its buffer: false for zeros not yet used. */
  get attached(): boolean {
    return this.#buffer !== undefined;
  }

  /** Gives zeros their buffer (GpuRuntime, at their first use). */
  attach(buffer: GPUBuffer): void {
    this.#buffer = buffer;
  }

  /** Bytes of the elements (the buffer may be larger). */
  get bytes(): number {
    return this.size * 4;
  }

  /** Bytes to bind: storage bindings may not be empty, so an empty tensor binds one element. */
  get bindingBytes(): number {
    return Math.max(4, this.bytes);
  }
}
