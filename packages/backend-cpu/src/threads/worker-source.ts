import { JOB_BLOCK_BYTES, JobSlot, JobState, WORKER_BLOCK_BYTES, WorkerReady, WorkerSlot } from './control';

/** How the worker script gets its start-up data and reports back. */
const PRELUDES = {
  /** Node: a CommonJS script for `new Worker(code, { eval: true })`, its data in workerData. */
  node: `const { parentPort, workerData } = require('node:worker_threads');
start(workerData, (message) => parentPort.postMessage(message));`,
  /** Browser: a classic Web Worker script, its data in the first message. */
  browser: `self.onmessage = (event) => {
  self.onmessage = null;
  start(event.data, (message) => self.postMessage(message));
};`,
} as const;

/**
 * The JavaScript source of a kernel worker for `host` (plain JavaScript, so no TypeScript loader or
 * bundler is needed). Its start-up data (KernelWorkerData) holds the compiled kernel module, the
 * shared memory, the addresses of its control block, of the job block and of its gemm work
 * area, the kernel names and how many polls to spin before sleeping. It serves jobs forever: claim a posted job, then
 * claim and run chunks until none is left, then go idle.
 */
export function workerSource(host: keyof typeof PRELUDES): string {
  return `'use strict';
${PRELUDES[host]}
function start({ module, memory, control, job, work, kernelNames, spin }, post) {
const own = new Int32Array(memory.buffer, control, ${WORKER_BLOCK_BYTES / 4});
const shared = new Int32Array(memory.buffer, job, ${JOB_BLOCK_BYTES / 4});
function runChunks(kernels) {
  const kernel = kernels[shared[${JobSlot.kernel}]];
  const argc = shared[${JobSlot.argc}];
  const count = shared[${JobSlot.count}];
  const args = new Array(argc + 1);
  args[argc] = work;
  for (;;) {
    const chunk = Atomics.add(shared, ${JobSlot.next}, 1);
    if (chunk >= count) return;
    const base = ${JobSlot.table} + chunk * argc;
    for (let i = 0; i < argc; i++) args[i] = shared[base + i];
    try {
      kernel(...args);
    } catch (error) {
      Atomics.store(shared, ${JobSlot.failed}, 1);
      post({ error: String(error) });
    }
  }
}
function serve(kernels) {
  for (;;) {
    let state = Atomics.load(own, ${WorkerSlot.state});
    for (let i = 0; state !== ${JobState.posted} && i < spin; i++) state = Atomics.load(own, ${WorkerSlot.state});
    if (state !== ${JobState.posted}) {
      Atomics.store(own, ${WorkerSlot.sleeping}, 1);
      Atomics.wait(own, ${WorkerSlot.state}, state);
      Atomics.store(own, ${WorkerSlot.sleeping}, 0);
      continue;
    }
    if (Atomics.compareExchange(own, ${WorkerSlot.state}, ${JobState.posted}, ${JobState.running}) !== ${JobState.posted}) continue;
    runChunks(kernels);
    Atomics.store(own, ${WorkerSlot.state}, ${JobState.idle});
    Atomics.notify(own, ${WorkerSlot.state});
  }
}
let kernels;
try {
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  kernels = kernelNames.map((name) => instance.exports[name]);
} catch (error) {
  Atomics.store(own, ${WorkerSlot.ready}, ${WorkerReady.failed});
  post({ error: String(error) });
}
if (kernels) {
  Atomics.store(own, ${WorkerSlot.ready}, ${WorkerReady.ready});
  post({ ready: true });
  serve(kernels);
}
}
`;
}
