/** What a kernel worker receives when it starts (see workerSource). */
export interface KernelWorkerData {
  /** The compiled kernel module, instantiated again on the worker. */
  readonly module: WebAssembly.Module;
  /** The shared memory the module imports. */
  readonly memory: WebAssembly.Memory;
  /** Address of the worker's control block (WorkerSlot). */
  readonly control: number;
  /** Address of the job block (JobSlot). */
  readonly job: number;
  /** Address of the worker's gemm work area. */
  readonly work: number;
  /** The kernel exports, in the order of the job block's kernel index. */
  readonly kernelNames: readonly string[];
  /** Polls of its state before the worker sleeps. */
  readonly spin: number;
}

/** What a kernel worker reports: that it is ready, or an error (on start-up or in a chunk). */
export type KernelWorkerMessage = { readonly ready: true } | { readonly error: string };

/** A started kernel worker, as the pool holds it. */
export interface SpawnedWorker {
  /** Whether the worker keeps the host alive (Node); hosts without the notion ignore it. */
  keepAlive(on: boolean): void;
}

/** Starts kernel workers on one kind of host: Node's worker_threads or the browser's Web Workers. */
export interface WorkerSpawner {
  readonly host: 'node' | 'browser';
  /** Starts a worker over `data`; every message it reports, and a failure to start, goes to `listener`. */
  spawn(data: KernelWorkerData, listener: (message: KernelWorkerMessage) => void): SpawnedWorker;
}
