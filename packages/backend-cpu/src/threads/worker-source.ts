import { MAX_ARGS, Slot, WorkerState } from './control';

/**
 * The JavaScript source of a kernel worker (a CommonJS script for `new Worker(code, { eval: true })`,
 * so no TypeScript loader is needed). It receives, as workerData, the compiled kernel module,
 * the shared memory, the address of its control block, the kernel names and how many polls to
 * spin before sleeping; then serves jobs forever: wait for `seq` to move, call the kernel,
 * publish `done`.
 */
export function workerSource(): string {
  return `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { module, memory, control, kernelNames, spin } = workerData;
const slots = new Int32Array(memory.buffer, control, ${Slot.args + MAX_ARGS});
function serve(kernels) {
  let seen = 0;
  for (;;) {
    let seq = Atomics.load(slots, ${Slot.seq});
    for (let i = 0; seq === seen && i < spin; i++) seq = Atomics.load(slots, ${Slot.seq});
    if (seq === seen) {
      Atomics.wait(slots, ${Slot.seq}, seen);
      continue;
    }
    seen = seq;
    const args = [];
    const argc = slots[${Slot.argc}];
    for (let i = 0; i < argc; i++) args.push(slots[${Slot.args} + i]);
    try {
      kernels[slots[${Slot.kernel}]](...args);
      slots[${Slot.status}] = 0;
    } catch (error) {
      slots[${Slot.status}] = 1;
      parentPort.postMessage({ error: String(error) });
    }
    Atomics.store(slots, ${Slot.done}, seen);
    Atomics.notify(slots, ${Slot.done});
  }
}
let kernels;
try {
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  kernels = kernelNames.map((name) => instance.exports[name]);
} catch (error) {
  Atomics.store(slots, ${Slot.state}, ${WorkerState.failed});
  parentPort.postMessage({ error: String(error) });
}
if (kernels) {
  Atomics.store(slots, ${Slot.state}, ${WorkerState.ready});
  parentPort.postMessage({ ready: true });
  serve(kernels);
}
`;
}
