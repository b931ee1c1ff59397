import type { GpuCounters } from './gpu-counters';

/** Smallest buffer the pool hands out, in bytes. */
const MIN_CLASS_BYTES = 256;
/** Free buffers kept for reuse at most; beyond this, released buffers are destroyed. */
const MAX_FREE_BYTES = 512 * 1024 * 1024;

/**
 * Rounds a request up to its size class: powers of two split into eight steps, so a buffer
 * wastes at most a quarter of its size and reuse between similar sizes is likely.
 */
export function sizeClass(bytes: number): number {
  if (bytes <= MIN_CLASS_BYTES) return MIN_CLASS_BYTES;
  const step = 2 ** Math.ceil(Math.log2(bytes)) / 8;
  return Math.ceil(bytes / step) * step;
}

interface Pending {
  readonly buffer: GPUBuffer;
  readonly serial: number;
}

/**
 * Buffers by usage and size class. A released buffer returns to the free lists only once
 * the command batch that last used it has completed, so no queued or in-flight work can
 * observe a new owner's writes (uploads, `writeSlice`, kernel outputs). At most
 * MAX_FREE_BYTES stay pooled; the rest are destroyed.
 */
export class BufferPool {
  readonly #device: GPUDevice;
  readonly #maxBufferSize: number;
  readonly #counters: GpuCounters;
  readonly #free = new Map<string, GPUBuffer[]>();
  #pending: Pending[] = [];
  #freeBytes = 0;

  constructor(device: GPUDevice, maxBufferSize: number, counters: GpuCounters) {
    this.#device = device;
    this.#maxBufferSize = maxBufferSize;
    this.#counters = counters;
  }

  /** A buffer of at least `bytes` bytes with exactly `usage`. */
  acquire(bytes: number, usage: GPUBufferUsageFlags): GPUBuffer {
    const size = Math.min(sizeClass(bytes), Math.max(this.#maxBufferSize - (this.#maxBufferSize % 4), bytes));
    const list = this.#free.get(keyOf(usage, size));
    const reused = list?.pop();
    if (reused) {
      this.#freeBytes -= reused.size;
      return reused;
    }
    this.#counters.buffersCreated++;
    this.#counters.bytesCreated += size;
    return this.#device.createBuffer({ size, usage });
  }

  /**
   * Gives a buffer back. `lastUse` is the serial of the last batch that used it and
   * `completed` the newest serial known to be done.
   */
  release(buffer: GPUBuffer, lastUse: number, completed: number): void {
    if (lastUse <= completed) this.#makeFree(buffer);
    else this.#pending.push({ buffer, serial: lastUse });
  }

  /** Frees every pending buffer whose last batch is at or before `completed`. */
  reclaim(completed: number): void {
    const waiting: Pending[] = [];
    for (const p of this.#pending) {
      if (p.serial <= completed) this.#makeFree(p.buffer);
      else waiting.push(p);
    }
    this.#pending = waiting;
  }

  /** Bytes held in the free lists. */
  get freeBytes(): number {
    return this.#freeBytes;
  }

  /** Number of released buffers still waiting for their batch to finish. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Destroys every free buffer (pending ones stay until their batch is done). */
  trim(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#freeBytes = 0;
  }

  #makeFree(buffer: GPUBuffer): void {
    if (this.#freeBytes + buffer.size > MAX_FREE_BYTES) {
      buffer.destroy();
      return;
    }
    const key = keyOf(buffer.usage, buffer.size);
    let list = this.#free.get(key);
    if (!list) {
      list = [];
      this.#free.set(key, list);
    }
    list.push(buffer);
    this.#freeBytes += buffer.size;
  }
}

function keyOf(usage: number, size: number): string {
  return `${usage}:${size}`;
}
