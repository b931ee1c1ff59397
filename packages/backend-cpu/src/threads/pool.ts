import { GEMM_WORK_BYTES } from '../wasm/gemm-kernel';
import type { ParamKind } from '../wasm/kernel-spec';
import { paramKinds } from '../wasm/kernels';
import { f32Bits, KERNEL_NAMES, type KernelName, type WasmRuntime } from '../wasm/runtime';
import {
  JOB_BLOCK_BYTES,
  JobSlot,
  JobState,
  MAX_ARGS,
  MAX_CHUNKS,
  WORKER_BLOCK_BYTES,
  WorkerReady,
  WorkerSlot,
} from './control';
import type { SpawnedWorker, WorkerSpawner } from './spawner';

/**
 * A kernel call cut into chunks (argument lists, f32 parameters as their values) that threads
 * claim one at a time. The running thread appends its own work area as the last argument.
 */
export interface Job {
  readonly kernel: KernelName;
  readonly chunks: readonly (readonly number[])[];
}

/**
 * Polls of its state before a worker sleeps (about a millisecond): keeps it available for the
 * next product of a sequence (a training step) without a futex wake-up.
 */
const WORKER_SPIN = 100_000;
/** Polls before the main thread sleeps while a worker finishes its last chunk. */
const MAIN_SPIN = 20_000;

interface KernelWorker {
  readonly worker: SpawnedWorker;
  /** The worker's control block (WorkerSlot). */
  readonly slots: Int32Array;
}

/**
 * Worker threads that run kernels on the shared WebAssembly memory, for a synchronous
 * fork-join from the main thread. `run` posts a job to the ready workers and claims chunks
 * itself; a worker that has not started by the time the chunks are gone (busy machine,
 * asleep) is cancelled instead of waited for. The spawner starts the workers: Node's worker_threads
 * (which never keep the process alive) or a browser's Web Workers. The calling thread blocks in
 * `Atomics.wait` while the last chunks finish, so it must be one allowed to (Node, a Web Worker).
 */
export class ThreadPool {
  readonly #workers: KernelWorker[] = [];
  readonly #ready: Promise<void>[] = [];
  readonly #job: Int32Array;
  readonly #jobAddress: number;

  constructor(
    private readonly runtime: WasmRuntime,
    private readonly spawner: WorkerSpawner,
  ) {
    const job = runtime.heap.alloc(JOB_BLOCK_BYTES);
    if (!job) throw new Error('thread pool: WebAssembly memory is full, cannot allocate the job block');
    this.#jobAddress = job.offset;
    this.#job = new Int32Array(runtime.heap.memory.buffer, job.offset, JOB_BLOCK_BYTES / 4);
  }

  /** Starts workers until there are `count` of them. */
  grow(count: number): void {
    const { heap, module } = this.runtime;
    while (this.#workers.length < count) {
      const control = heap.alloc(WORKER_BLOCK_BYTES);
      const work = heap.alloc(GEMM_WORK_BYTES);
      if (!control || !work)
        throw new Error('thread pool: WebAssembly memory is full, cannot start a worker');
      let started: () => void = () => {};
      this.#ready.push(
        new Promise<void>((resolve) => {
          started = resolve;
        }),
      );
      const worker = this.spawner.spawn(
        {
          module,
          memory: heap.memory,
          control: control.offset,
          job: this.#jobAddress,
          work: work.offset,
          kernelNames: KERNEL_NAMES,
          spin: WORKER_SPIN,
        },
        (message) => {
          if ('error' in message) console.error(`matmul worker failed: ${message.error}`);
          started();
        },
      );
      this.#workers.push({
        worker,
        slots: new Int32Array(heap.memory.buffer, control.offset, WORKER_BLOCK_BYTES / 4),
      });
    }
  }

  /** Resolves once every started worker is ready (or failed); gives the number ready. */
  async whenReady(): Promise<number> {
    // Keep the process alive while waiting, then let it exit with idle workers again.
    for (const w of this.#workers) w.worker.keepAlive(true);
    await Promise.all(this.#ready);
    for (const w of this.#workers) w.worker.keepAlive(false);
    return this.#readyWorkers(this.#workers.length).length;
  }

  /** Number of workers `run` would use now, at most `limit`. */
  readyCount(limit: number): number {
    return this.#readyWorkers(limit).length;
  }

  /**
   * Runs all chunks of `job` on this thread and up to `maxWorkers` ready workers; returns when
   * all are done. Sleeping workers are woken only when `wake` is set (the job is long enough to
   * pay for it); spinning ones join in either way.
   */
  run(job: Job, maxWorkers: number, wake: boolean): void {
    const { chunks } = job;
    const argc = chunks[0]?.length ?? 0;
    if (chunks.length > MAX_CHUNKS || argc + 1 > MAX_ARGS || chunks.some((c) => c.length !== argc)) {
      throw new Error(`thread pool: ${chunks.length} chunks of ${argc} arguments do not fit the job block`);
    }
    const kinds = kernelParamKinds(job.kernel);
    if (kinds.length !== argc) {
      throw new Error(
        `thread pool: kernel ${job.kernel} takes ${kinds.length} arguments, its chunks have ${argc}`,
      );
    }
    const slots = this.#job;
    slots[JobSlot.count] = chunks.length;
    slots[JobSlot.kernel] = kernelIndex(job.kernel);
    slots[JobSlot.argc] = argc;
    slots[JobSlot.failed] = 0;
    // The workers call the raw exports, which take an f32 parameter as its bits.
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i];
      const base = JobSlot.table + i * argc;
      for (let p = 0; p < argc; p++) slots[base + p] = kinds[p] === 'f32' ? f32Bits(chunk[p]) : chunk[p];
    }
    Atomics.store(slots, JobSlot.next, 0);
    const workers = this.#readyWorkers(maxWorkers);
    for (const w of workers) {
      Atomics.store(w.slots, WorkerSlot.state, JobState.posted);
      if (wake && Atomics.load(w.slots, WorkerSlot.sleeping) === 1) Atomics.notify(w.slots, WorkerSlot.state);
    }
    const kernel = untypedKernel(this.runtime, job.kernel);
    const work = this.runtime.work.offset;
    try {
      for (;;) {
        const chunk = Atomics.add(slots, JobSlot.next, 1);
        if (chunk >= chunks.length) break;
        kernel(...chunks[chunk], work);
      }
    } finally {
      for (const w of workers) join(w);
    }
    if (Atomics.load(slots, JobSlot.failed) !== 0) {
      throw new Error('matmul: a worker thread failed on its part of the product; see the error above');
    }
  }

  #readyWorkers(limit: number): KernelWorker[] {
    const ready: KernelWorker[] = [];
    for (const w of this.#workers) {
      if (ready.length >= limit) break;
      if (Atomics.load(w.slots, WorkerSlot.ready) === WorkerReady.ready) ready.push(w);
    }
    return ready;
  }
}

/** The parameter kinds of each kernel, looked up once per name (a job is posted for every large product). */
const kindsByKernel = new Map<KernelName, readonly ParamKind[]>();

/** `paramKinds(name)`, remembered. */
export function kernelParamKinds(name: KernelName): readonly ParamKind[] {
  let kinds = kindsByKernel.get(name);
  if (kinds === undefined) {
    kinds = paramKinds(name);
    kindsByKernel.set(name, kinds);
  }
  return kinds;
}

/** Each kernel's index in KERNEL_NAMES (the job block's kernel slot), looked up once per name. */
const kernelIndices = new Map<KernelName, number>(KERNEL_NAMES.map((name, i) => [name, i]));

function kernelIndex(name: KernelName): number {
  const index = kernelIndices.get(name);
  if (index === undefined) throw new Error(`thread pool: no kernel named ${name} in the registry`);
  return index;
}

/** Cancels the worker's job if it has not claimed it yet, else waits until it has finished. */
function join(w: KernelWorker): void {
  if (Atomics.compareExchange(w.slots, WorkerSlot.state, JobState.posted, JobState.idle) === JobState.posted)
    return;
  let state = Atomics.load(w.slots, WorkerSlot.state);
  for (let i = 0; state !== JobState.idle && i < MAIN_SPIN; i++)
    state = Atomics.load(w.slots, WorkerSlot.state);
  while (state !== JobState.idle) {
    Atomics.wait(w.slots, WorkerSlot.state, state);
    state = Atomics.load(w.slots, WorkerSlot.state);
  }
}

/**
 * Kernel `name` of `runtime` called with a run-time argument list (a chunk), which the caller has
 * checked against the kernel's parameters.
 */
export function untypedKernel(runtime: WasmRuntime, name: KernelName): (...args: number[]) => void {
  // Every kernel is a function of numbers; only the tuple of its arguments is lost here.
  return runtime.kernels[name] as (...args: number[]) => void;
}
