import type { BufferPool } from './buffer-pool';
import type { DeviceLimits } from './device-limits';
import type { GpuCounters } from './gpu-counters';
import { UNIFORM_USAGE } from './gpu-flags';

/** Bytes of the uniform arena each batch packs its kernel parameters into. */
const ARENA_BYTES = 64 * 1024;

interface Arena {
  readonly buffer: GPUBuffer;
  used: number;
}

/**
 * Records many dispatches into one command buffer and submits it on `submit()` or once it
 * holds `maxDispatches`. Kernel parameters of the whole batch live in one uniform arena that
 * is uploaded right before the submit. Batches are numbered by serial; when the queue reports
 * a batch done, released buffers that batch used return to the pool.
 *
 * Readers ask for a submit with `submitSoon()`, which submits once the current microtask is done: reads
 * started together (an argmax and a check sum read with `Promise.all`) share one command buffer.
 */
export class CommandBatch {
  readonly #device: GPUDevice;
  readonly #pool: BufferPool;
  readonly #align: number;
  readonly #maxDispatches: number;
  readonly #maxParamBytes: number;
  readonly #counters: GpuCounters;
  readonly #staging = new Uint8Array(ARENA_BYTES);
  #encoder: GPUCommandEncoder | undefined;
  #pass: GPUComputePassEncoder | undefined;
  #arena: Arena | undefined;
  #dispatches = 0;
  #serial = 1;
  #completed = 0;
  #inFlight = 0;
  #idle: (() => void)[] = [];
  /** Resolvers waiting for the batch being recorded to be submitted. */
  #submitted: (() => void)[] = [];

  constructor(
    device: GPUDevice,
    pool: BufferPool,
    limits: DeviceLimits,
    maxDispatches: number,
    counters: GpuCounters,
  ) {
    this.#device = device;
    this.#pool = pool;
    this.#counters = counters;
    this.#align = limits.minUniformBufferOffsetAlignment;
    this.#maxDispatches = maxDispatches;
    this.#maxParamBytes = Math.min(ARENA_BYTES, limits.maxUniformBufferBindingSize);
  }

  /** Serial of the batch being recorded: work recorded now completes with this serial. */
  get serial(): number {
    return this.#serial;
  }

  /** Newest serial whose work the queue has finished. */
  get completed(): number {
    return this.#completed;
  }

  /** Makes room for one dispatch with `paramBytes` of parameters, submitting the batch if it is full. */
  reserve(paramBytes: number): void {
    if (paramBytes > this.#maxParamBytes) {
      throw new Error(
        `webgpu: a kernel needs ${paramBytes} bytes of parameters, more than the ${this.#maxParamBytes} one uniform binding holds`,
      );
    }
    const full =
      this.#dispatches >= this.#maxDispatches ||
      (this.#arena !== undefined && this.#arena.used + this.#slot(paramBytes) > ARENA_BYTES);
    if (full) this.submit();
  }

  /** Copies kernel parameters into the arena; returns the binding that reads them. */
  params(bytes: ArrayBuffer): GPUBufferBinding {
    if (!this.#arena) this.#arena = { buffer: this.#pool.acquire(ARENA_BYTES, UNIFORM_USAGE), used: 0 };
    const offset = this.#arena.used;
    this.#staging.set(new Uint8Array(bytes), offset);
    this.#arena.used += this.#slot(bytes.byteLength);
    this.#counters.paramBlocks++;
    return { buffer: this.#arena.buffer, offset, size: bytes.byteLength };
  }

  dispatch(
    pipeline: GPUComputePipeline,
    bindGroup: GPUBindGroup,
    grid: readonly [number, number, number],
  ): void {
    const pass = this.#computePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(grid[0], grid[1], grid[2]);
    this.#dispatches++;
    this.#counters.dispatches++;
  }

  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.#endPass();
    this.#commandEncoder().copyBufferToBuffer(src, 0, dst, 0, bytes);
    this.#dispatches++;
    this.#counters.copies++;
  }

  /**
   * Resolves once the batch being recorded now is submitted, which happens at the latest when the
   * current microtask ends (earlier if it fills up or someone calls `submit()`).
   */
  submitSoon(): Promise<void> {
    const submitted = new Promise<void>((resolve) => this.#submitted.push(resolve));
    if (this.#submitted.length === 1) queueMicrotask(() => this.submit());
    return submitted;
  }

  /** Submits what was recorded (if anything); returns the serial that work completes with. */
  submit(): number {
    const serial = this.#serial;
    const waiting = this.#submitted;
    this.#submitted = [];
    for (const resolve of waiting) resolve();
    if (!this.#encoder) return serial - 1;
    this.#endPass();
    const arena = this.#arena;
    if (arena) {
      this.#device.queue.writeBuffer(arena.buffer, 0, this.#staging, 0, arena.used);
      this.#counters.paramUploads++;
      this.#counters.paramBytes += arena.used;
    }
    this.#device.queue.submit([this.#encoder.finish()]);
    this.#counters.submits++;
    if (arena) this.#pool.release(arena.buffer, serial, this.#completed);
    this.#encoder = undefined;
    this.#arena = undefined;
    this.#dispatches = 0;
    this.#serial++;
    this.#inFlight++;
    this.#device.queue.onSubmittedWorkDone().then(() => this.#done(serial));
    return serial;
  }

  /** Resolves once every submitted batch has completed. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * Records that the queue has finished batch `serial` (a readback of it was mapped), so buffers released
   * after their last use in it return to the pool now rather than when the queue's callback comes.
   */
  completedThrough(serial: number): void {
    if (serial <= this.#completed) return;
    this.#completed = serial;
    this.#pool.reclaim(serial);
  }

  #done(serial: number): void {
    this.#inFlight--;
    this.completedThrough(serial);
    if (this.#inFlight === 0) {
      const waiting = this.#idle;
      this.#idle = [];
      for (const resolve of waiting) resolve();
    }
  }

  #slot(bytes: number): number {
    return Math.ceil(bytes / this.#align) * this.#align;
  }

  #commandEncoder(): GPUCommandEncoder {
    this.#encoder ??= this.#device.createCommandEncoder();
    return this.#encoder;
  }

  #computePass(): GPUComputePassEncoder {
    this.#pass ??= this.#commandEncoder().beginComputePass();
    return this.#pass;
  }

  #endPass(): void {
    this.#pass?.end();
    this.#pass = undefined;
  }
}
