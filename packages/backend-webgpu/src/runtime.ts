import { allocHost, type DataId, type DType, type HostArray } from '@loom/tensor';
import { BufferPool } from './buffer-pool';
import { CommandBatch } from './command-batch';
import { type DeviceFeatures, readFeatures } from './device-features';
import { type DeviceLimits, readLimits } from './device-limits';
import { GpuCounters, type GpuCounts } from './gpu-counters';
import { MapMode, STAGING_USAGE, STORAGE_USAGE } from './gpu-flags';
import { GpuStorage } from './gpu-storage';
import type { KernelProgram } from './kernel-program';
import { fillLaunch } from './kernels/fill-program';
import { PipelineCache } from './pipeline-cache';
import { gridFor } from './workgroup-grid';

/** Dispatches recorded into one command buffer before it is submitted. */
const DISPATCHES_PER_SUBMIT = 128;

/** One kernel dispatch: a program, its buffers in binding order, parameters and workgroup count. */
export interface Launch {
  readonly program: KernelProgram;
  readonly inputs: readonly GpuStorage[];
  readonly outputs: readonly GpuStorage[];
  /** Packed `Params`; required exactly when `program.uniform` is set. */
  readonly params?: ArrayBuffer;
  /** A count is spread over x and y within the device limits; a triple is dispatched as given. */
  readonly workgroups: number | readonly [number, number, number];
  /**
   * Bytes the dispatch reads from its inputs by its geometry, where that is less than they bind (attention
   * over a preallocated cache reads only the visible keys); counted in `inputBytes` instead of the bound sizes.
   */
  readonly readBytes?: number;
}

/**
 * Counters of a backend's device memory and work, for tests, benchmarks and leak hunting: the running
 * totals of `GpuCounts` (subtract two snapshots for per-step figures) and the current memory state.
 */
export interface WebGPUStats extends GpuCounts {
  /** Storages the front-end holds. */
  readonly liveCount: number;
  readonly liveBytes: number;
  /** Bytes of free buffers kept for reuse. */
  readonly pooledBytes: number;
  /** Released buffers waiting for the work that used them to finish. */
  readonly pendingReleases: number;
  /** Compute pipelines cached now. */
  readonly pipelines: number;
}

/**
 * Owns the device side of the backend: storage allocation and accounting, the buffer pool,
 * the pipeline cache, batched command recording and readback.
 */
export class GpuRuntime {
  readonly device: GPUDevice;
  readonly limits: DeviceLimits;
  readonly features: DeviceFeatures;
  readonly pool: BufferPool;
  readonly pipelines: PipelineCache;
  readonly batch: CommandBatch;
  readonly counters = new GpuCounters();
  #liveCount = 0;
  #liveBytes = 0;
  #error: string | undefined;
  #lost: string | undefined;

  /** `features` overrides what is detected, to run other kernel paths (see `readFeatures`). */
  constructor(device: GPUDevice, features: Partial<DeviceFeatures> = {}) {
    this.device = device;
    this.limits = readLimits(device.limits);
    this.features = readFeatures(device, features);
    this.pool = new BufferPool(device, this.limits.maxBufferSize, this.counters);
    this.pipelines = new PipelineCache(device, this.counters);
    this.batch = new CommandBatch(device, this.pool, this.limits, DISPATCHES_PER_SUBMIT, this.counters);
    device.addEventListener('uncapturederror', (event) => {
      this.#error ??= event.error.message;
    });
    device.lost.then((info) => {
      this.#lost = `the device was lost (${info.reason}): ${info.message}`;
    });
  }

  get liveCount(): number {
    return this.#liveCount;
  }

  get liveBytes(): number {
    return this.#liveBytes;
  }

  stats(): WebGPUStats {
    return {
      ...this.counters.snapshot(),
      liveCount: this.#liveCount,
      liveBytes: this.#liveBytes,
      pooledBytes: this.pool.freeBytes,
      pendingReleases: this.pool.pendingCount,
      pipelines: this.pipelines.size,
    };
  }

  /** New storage for `size` elements; its contents are undefined until a kernel or upload writes it. */
  alloc(size: number, dtype: DType): GpuStorage {
    const storage = this.#counted(size, dtype);
    storage.attach(this.#acquire(storage));
    return storage;
  }

  /**
   * Storage for `size` zeros that takes its buffer, filled, at its first use (in `launch` or `read`): freed unused,
   * as the f32 weights of a model's quantized layers are, it never takes device memory.
   */
  zeros(size: number, dtype: DType): GpuStorage {
    return this.#counted(size, dtype);
  }

  /** Storage for `size` elements, counted live, not yet given a buffer. */
  #counted(size: number, dtype: DType): GpuStorage {
    const storage = new GpuStorage(undefined, size, dtype);
    this.#liveCount++;
    this.#liveBytes += storage.bytes;
    return storage;
  }

  /**
   * A buffer for `storage`, checked against the binding limit first: zeros freed unused (the f32 weights of a model's
   * compact layers, the embedding's included) may exceed it, since they never take one.
   */
  #acquire(storage: GpuStorage): GPUBuffer {
    const { size, dtype, bytes } = storage;
    if (bytes > this.limits.maxStorageBufferBindingSize) {
      throw new Error(
        `webgpu: a ${dtype} tensor of ${size} elements needs ${bytes} bytes, more than this device's ` +
          `maxStorageBufferBindingSize of ${this.limits.maxStorageBufferBindingSize} bytes; split it into smaller tensors`,
      );
    }
    return this.pool.acquire(Math.max(4, bytes), STORAGE_USAGE);
  }

  /** Gives zeros not yet used their buffer, filled with zeros by a dispatch recorded before whatever uses them. */
  #attach(storage: GpuStorage): void {
    if (storage.attached) return;
    storage.attach(this.#acquire(storage));
    const zeros = fillLaunch(storage.dtype, storage.size, 0, this.limits.workgroupSize);
    this.launch({ ...zeros, inputs: [], outputs: [storage] });
  }

  /** Copies host values into new storage; a Float64Array is rounded to float32 first. */
  upload(values: HostArray): GpuStorage {
    const storage = this.alloc(values.length, values instanceof Int32Array ? 'i32' : 'f32');
    const data = values instanceof Float64Array ? Float32Array.from(values) : values;
    if (data.length > 0) {
      this.device.queue.writeBuffer(storage.buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      this.counters.uploads++;
      this.counters.bytesUploaded += data.byteLength;
    }
    return storage;
  }

  /** The storage behind a handle the front-end passed in. */
  storage(id: DataId): GpuStorage {
    if (!(id instanceof GpuStorage)) {
      throw new Error(
        `webgpu: got storage of the ${id.backend} backend; move the tensor with toBackend() first`,
      );
    }
    if (id.released) throw new Error('webgpu: the storage was released; the tensor was disposed');
    return id;
  }

  /** Returns storage to the pool once the work that uses it has finished. */
  release(storage: GpuStorage): void {
    if (storage.released) return;
    storage.released = true;
    this.#liveCount--;
    this.#liveBytes -= storage.bytes;
    if (storage.attached) this.pool.release(storage.buffer, storage.lastUse, this.batch.completed);
  }

  /** Records a dispatch; nothing is recorded for zero workgroups. */
  launch(launch: Launch): void {
    const { program } = launch;
    const grid =
      typeof launch.workgroups === 'number'
        ? gridFor(launch.workgroups, this.limits.maxWorkgroupsPerDimension)
        : launch.workgroups;
    if (grid[0] * grid[1] * grid[2] === 0) return;
    if ((launch.params !== undefined) !== program.uniform) {
      throw new Error(`webgpu: kernel ${program.key} ${program.uniform ? 'needs' : 'takes no'} parameters`);
    }
    const buffers = [...launch.inputs, ...launch.outputs];
    if (buffers.length > this.limits.maxStorageBuffersPerShaderStage) {
      throw new Error(
        `webgpu: kernel ${program.key} binds ${buffers.length} storage buffers, this device allows ${this.limits.maxStorageBuffersPerShaderStage}`,
      );
    }
    for (const s of buffers) this.#attach(s);
    this.batch.reserve(launch.params?.byteLength ?? 0);
    const { pipeline, bindGroupLayout } = this.pipelines.get(program);
    const entries: GPUBindGroupEntry[] = buffers.map((s, binding) => ({
      binding,
      resource: { buffer: s.buffer, offset: 0, size: s.bindingBytes },
    }));
    if (launch.params) entries.push({ binding: entries.length, resource: this.batch.params(launch.params) });
    const bindGroup = this.device.createBindGroup({ layout: bindGroupLayout, entries });
    this.counters.bindGroups++;
    this.counters.inputBytes += launch.readBytes ?? launch.inputs.reduce((sum, s) => sum + s.bindingBytes, 0);
    for (const s of buffers) s.lastUse = this.batch.serial;
    this.batch.dispatch(pipeline, bindGroup, grid);
  }

  /** Submits recorded work. */
  flush(): void {
    this.batch.submit();
  }

  /**
   * Copies storage to a staging buffer and maps it once the queue gets there. The submit waits for the
   * end of the current microtask, so reads started together go out in one command buffer.
   */
  async read(storage: GpuStorage): Promise<HostArray> {
    const { bytes, dtype } = storage;
    if (bytes === 0) {
      this.#throwIfFailed();
      return allocHost(dtype, 0);
    }
    this.#attach(storage);
    const staging = this.pool.acquire(bytes, STAGING_USAGE);
    this.batch.reserve(0);
    this.batch.copy(storage.buffer, staging, bytes);
    const serial = this.batch.serial;
    storage.lastUse = serial;
    await this.batch.submitSoon();
    try {
      await staging.mapAsync(MapMode.READ, 0, bytes);
    } catch (err) {
      this.#throwIfFailed();
      throw err;
    }
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    this.counters.readbacks++;
    this.counters.bytesRead += bytes;
    // The mapping means the queue finished this batch (and every one before it).
    this.batch.completedThrough(serial);
    this.pool.release(staging, serial, serial);
    this.#throwIfFailed();
    return dtype === 'f32' ? new Float32Array(copy) : new Int32Array(copy);
  }

  /** Resolves when every submitted batch has finished. */
  async sync(): Promise<void> {
    this.batch.submit();
    await this.batch.idle();
    this.#throwIfFailed();
  }

  /** Throws the first error the device reported since the last check (and every time once it is lost). */
  #throwIfFailed(): void {
    if (this.#lost !== undefined) throw new Error(`webgpu: ${this.#lost}; create a new backend`);
    const error = this.#error;
    this.#error = undefined;
    if (error !== undefined) throw new Error(`webgpu: the device reported an error: ${error}`);
  }
}
