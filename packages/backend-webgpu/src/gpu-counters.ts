/**
 * Running totals of the work and memory traffic a backend has asked of its device, kept by the
 * runtime, the buffer pool and the command batch as they go: plain integer increments, cheap
 * enough to stay on. Differences between two snapshots give per-step figures that do not depend
 * on the device's speed (dispatches per token, buffers created per step).
 */
export interface GpuCounts {
  /** Compute dispatches recorded. */
  readonly dispatches: number;
  /** Buffer-to-buffer copies recorded (writeSlice through a copy, readbacks). */
  readonly copies: number;
  /** Command buffers submitted to the queue. */
  readonly submits: number;
  /** GPU buffers created (every kind: storage, staging, uniform); the pool's reuses are not counted. */
  readonly buffersCreated: number;
  readonly bytesCreated: number;
  /** Tensor uploads (`queue.writeBuffer` of host values) and their bytes. */
  readonly uploads: number;
  readonly bytesUploaded: number;
  /** Uploads of packed kernel parameters (one per submitted batch that has any) and their bytes. */
  readonly paramUploads: number;
  readonly paramBytes: number;
  /** Kernel dispatches that carried parameters. */
  readonly paramBlocks: number;
  /** Readbacks to the host and their bytes. */
  readonly readbacks: number;
  readonly bytesRead: number;
  /** Bind groups created (one per dispatch). */
  readonly bindGroups: number;
  /**
   * Bytes of storage the dispatches bind as inputs: each dispatch adds the bound size of every input, or
   * the bytes its geometry reads where the kernel says so (attention: the visible keys and values; a gather: the rows it picks). An upper
   * bound on what the kernels read from memory, since every kernel reads each bound input at most once per
   * dispatch through its cache.
   */
  readonly inputBytes: number;
  /** Compute pipelines compiled. */
  readonly pipelinesCompiled: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The mutable counters behind `GpuCounts`; `snapshot()` copies them. */
export class GpuCounters implements Mutable<GpuCounts> {
  dispatches = 0;
  copies = 0;
  submits = 0;
  buffersCreated = 0;
  bytesCreated = 0;
  uploads = 0;
  bytesUploaded = 0;
  paramUploads = 0;
  paramBytes = 0;
  paramBlocks = 0;
  readbacks = 0;
  bytesRead = 0;
  bindGroups = 0;
  inputBytes = 0;
  pipelinesCompiled = 0;

  snapshot(): GpuCounts {
    return { ...this };
  }
}
