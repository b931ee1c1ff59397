/**
 * Layout of one worker's control block: int32 slots in the shared WebAssembly memory through
 * which the main thread posts a kernel call and the worker reports its completion.
 */
export const Slot = {
  /** Incremented by the main thread to post a job. */
  seq: 0,
  /** Set by the worker to the seq of the last job it finished. */
  done: 1,
  /** WorkerState of the worker. */
  state: 2,
  /** 0 when the last job succeeded, 1 when it threw. */
  status: 3,
  /** Index of the kernel in KERNEL_NAMES. */
  kernel: 4,
  /** Number of arguments. */
  argc: 5,
  /** First of the arguments. */
  args: 6,
} as const;

export const WorkerState = { starting: 0, ready: 1, failed: 2 } as const;

/** Most arguments a job may carry. */
export const MAX_ARGS = 16;

/** Bytes of one control block (two cache lines, so blocks of different workers never share one). */
export const CONTROL_BYTES = 128;
