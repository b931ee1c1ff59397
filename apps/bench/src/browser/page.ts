import { CpuBackend } from '@loom/backend-cpu';
import type { BenchPage, BenchReply, BenchRequest } from './protocol';

/** The bench page: its model worker, driven one request at a time through `window.loomBench`. */
const worker = new Worker(new URL('./bench-worker.ts', import.meta.url), {
  type: 'module',
  name: 'loom-bench',
});
let queue: Promise<unknown> = Promise.resolve();

function request(message: BenchRequest): Promise<BenchReply> {
  const reply = queue.then(
    () =>
      new Promise<BenchReply>((resolve) => {
        worker.onmessage = (event: MessageEvent<BenchReply>) => resolve(event.data);
        worker.onerror = (event) =>
          resolve({ kind: 'error', message: `the bench worker failed: ${event.message}` });
        worker.postMessage(message);
      }),
  );
  queue = reply;
  return reply;
}

/** Two threads asked for on the page's main thread, where the pool cannot block: it starts none. */
const mainThreadThreads = () => new CpuBackend({ threads: 2 }).threadsReady();

const page: BenchPage = { request, mainThreadThreads, crossOriginIsolated };
Object.assign(window, { loomBench: page });
