import type { KernelWorkerData, KernelWorkerMessage, SpawnedWorker, WorkerSpawner } from './spawner';
import { workerSource } from './worker-source';

/** Kernel workers as Node worker threads, running the worker source as an evaluated CommonJS script. */
export function nodeSpawner(workerThreads: typeof import('node:worker_threads')): WorkerSpawner {
  return {
    host: 'node',
    spawn(data: KernelWorkerData, listener: (message: KernelWorkerMessage) => void): SpawnedWorker {
      const worker = new workerThreads.Worker(workerSource('node'), {
        eval: true,
        execArgv: [],
        workerData: data,
      });
      worker.on('message', listener);
      worker.on('error', (error) => listener({ error: error.message }));
      // After the listeners, which would otherwise keep the process alive.
      worker.unref();
      return { keepAlive: (on) => (on ? worker.ref() : worker.unref()) };
    },
  };
}
