import type { Worker } from 'node:worker_threads';
import type { Block } from '../wasm/allocator';
import { gemmLayout } from '../wasm/gemm-kernel';
import { GEMM_CONFIG } from '../wasm/kernel-module';
import { KERNEL_NAMES, type KernelName, type WasmRuntime } from '../wasm/runtime';
import { CONTROL_BYTES, MAX_ARGS, Slot, WorkerState } from './control';
import { workerSource } from './worker-source';

/** One kernel call: which kernel and its i32 arguments. */
export interface Job {
  readonly kernel: KernelName;
  readonly args: readonly number[];
}

/** Polls of a flag before sleeping on it: covers back-to-back kernels without a futex round trip. */
const WORKER_SPIN = 20_000;
const MAIN_SPIN = 200_000;

interface KernelWorker {
  readonly worker: Worker;
  readonly slots: Int32Array;
  readonly control: Block;
  /** This worker's gemm work area (address in the heap). */
  readonly work: Block;
  seq: number;
}

/**
 * Worker threads that run kernels on the shared WebAssembly memory, for a synchronous
 * fork-join from the main thread: `run` posts jobs to ready workers through Atomics, runs the
 * first job itself and waits for the rest. Node only (worker_threads); workers that are not
 * ready yet are simply not used, and they never keep the process alive.
 */
export class ThreadPool {
  readonly #workers: KernelWorker[] = [];
  readonly #ready: Promise<void>[] = [];

  constructor(
    private readonly runtime: WasmRuntime,
    private readonly workerThreads: typeof import('node:worker_threads'),
  ) {}

  /** Starts workers until there are `count` of them. */
  grow(count: number): void {
    const { heap, module } = this.runtime;
    while (this.#workers.length < count) {
      const control = heap.alloc(CONTROL_BYTES);
      const work = heap.alloc(gemmLayout(GEMM_CONFIG).bytes);
      if (!control || !work)
        throw new Error('thread pool: WebAssembly memory is full, cannot start a worker');
      const worker = new this.workerThreads.Worker(workerSource(), {
        eval: true,
        workerData: {
          module,
          memory: heap.memory,
          control: control.offset,
          kernelNames: KERNEL_NAMES,
          spin: WORKER_SPIN,
        },
      });
      worker.unref();
      this.#ready.push(
        new Promise<void>((resolve) => {
          worker.on('message', (message: { ready?: boolean; error?: string }) => {
            if (message.error) console.error(`matmul worker: ${message.error}`);
            resolve();
          });
          worker.on('error', (error) => {
            console.error(`matmul worker failed to start: ${error.message}`);
            resolve();
          });
        }),
      );
      const slots = new Int32Array(heap.memory.buffer, control.offset, CONTROL_BYTES / 4);
      this.#workers.push({ worker, slots, control, work, seq: 0 });
    }
  }

  /** Resolves once every started worker is ready (or failed); gives the number ready. */
  async whenReady(): Promise<number> {
    await Promise.all(this.#ready);
    return this.#readyWorkers(this.#workers.length).length;
  }

  /** Work areas of the threads that `run` would use now: the main thread's, then ready workers'. */
  workAreas(maxThreads: number): number[] {
    return [this.runtime.work.offset, ...this.#readyWorkers(maxThreads - 1).map((w) => w.work.offset)];
  }

  /**
   * Runs jobs[0] here and jobs[i] on the i-th ready worker (as listed by `workAreas` with the
   * same `maxThreads`), returning when all are done.
   */
  run(jobs: readonly Job[], maxThreads: number): void {
    const workers = this.#readyWorkers(maxThreads - 1);
    if (jobs.length > workers.length + 1) {
      throw new Error(`thread pool: ${jobs.length} jobs for ${workers.length + 1} threads`);
    }
    const posted = workers.slice(0, jobs.length - 1);
    for (const [i, w] of posted.entries()) post(w, jobs[i + 1]);
    const [first] = jobs;
    this.runtime.kernels[first.kernel](...first.args);
    const failed = posted.filter((w) => !join(w));
    if (failed.length > 0)
      throw new Error(`matmul: ${failed.length} worker job(s) failed; see the worker error above`);
  }

  #readyWorkers(limit: number): KernelWorker[] {
    const ready: KernelWorker[] = [];
    for (const w of this.#workers) {
      if (ready.length >= limit) break;
      if (Atomics.load(w.slots, Slot.state) === WorkerState.ready) ready.push(w);
    }
    return ready;
  }
}

function post(w: KernelWorker, job: Job): void {
  if (job.args.length > MAX_ARGS)
    throw new Error(`thread pool: ${job.kernel} has ${job.args.length} arguments, max ${MAX_ARGS}`);
  w.slots[Slot.kernel] = KERNEL_NAMES.indexOf(job.kernel);
  w.slots[Slot.argc] = job.args.length;
  job.args.forEach((value, i) => {
    w.slots[Slot.args + i] = value;
  });
  w.seq = (w.seq + 1) | 0;
  Atomics.store(w.slots, Slot.seq, w.seq);
  Atomics.notify(w.slots, Slot.seq);
}

/** Waits for the worker's current job; false when it threw. */
function join(w: KernelWorker): boolean {
  let done = Atomics.load(w.slots, Slot.done);
  for (let i = 0; done !== w.seq && i < MAIN_SPIN; i++) done = Atomics.load(w.slots, Slot.done);
  while (done !== w.seq) {
    Atomics.wait(w.slots, Slot.done, done);
    done = Atomics.load(w.slots, Slot.done);
  }
  return Atomics.load(w.slots, Slot.status) === 0;
}

/** The worker_threads module where the host is Node (or compatible), else undefined. */
export function nodeWorkerThreads(): typeof import('node:worker_threads') | undefined {
  if (typeof process === 'undefined' || typeof process.getBuiltinModule !== 'function') return undefined;
  return process.getBuiltinModule('node:worker_threads');
}
