/**
 * Shared-memory layout of the fork-join protocol. Each worker has a control block (its own
 * cache line) with `ready` and `state`; one job block describes the current job as a table of
 * chunks (argument lists of one kernel) that the threads claim one at a time.
 */
export const WorkerSlot = {
  /** WorkerReady of the worker. */
  ready: 0,
  /** JobState: the main thread posts (idle -> posted) and may cancel (posted -> idle); the worker claims (posted -> running) and finishes (running -> idle). */
  state: 1,
  /** 1 while the worker sleeps in Atomics.wait (then posting a job needs a notify to reach it). */
  sleeping: 2,
} as const;

export const WorkerReady = { starting: 0, ready: 1, failed: 2 } as const;
export const JobState = { idle: 0, posted: 1, running: 2 } as const;

/** Bytes of one worker control block. */
export const WORKER_BLOCK_BYTES = 64;

export const JobSlot = {
  /** Next chunk to claim (Atomics.add). */
  next: 0,
  /** Number of chunks. */
  count: 1,
  /** Index of the kernel in KERNEL_NAMES. */
  kernel: 2,
  /** Arguments per chunk. */
  argc: 3,
  /** Set to 1 when a chunk threw on a worker. */
  failed: 4,
  /** First slot of the chunk table: chunk i's arguments start at table + i * argc. */
  table: 16,
} as const;

/** Most arguments of a kernel with its work area (the attention backward takes 20 and it), and most chunks of a job. */
export const MAX_ARGS = 21;
export const MAX_CHUNKS = 64;

/** Bytes of the job block. */
export const JOB_BLOCK_BYTES = (JobSlot.table + MAX_CHUNKS * MAX_ARGS) * 4;
