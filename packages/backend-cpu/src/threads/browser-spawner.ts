import type { KernelWorkerData, KernelWorkerMessage, SpawnedWorker, WorkerSpawner } from './spawner';
import { workerSource } from './worker-source';

/** The Blob URL of the browser worker script, made once per thread. */
let scriptUrl: string | undefined;

/**
 * Kernel workers as Web Workers, loaded from a Blob URL of the generated source (no file to bundle or
 * serve); each gets its start-up data, the module and the shared memory included, by postMessage.
 */
export function browserSpawner(): WorkerSpawner {
  return {
    host: 'browser',
    spawn(data: KernelWorkerData, listener: (message: KernelWorkerMessage) => void): SpawnedWorker {
      scriptUrl ??= URL.createObjectURL(new Blob([workerSource('browser')], { type: 'text/javascript' }));
      const worker = new Worker(scriptUrl, { name: 'loom-cpu-kernels' });
      worker.onmessage = (event: MessageEvent<KernelWorkerMessage>) => listener(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        listener({ error: event.message || 'the worker script failed to load' });
      };
      worker.onmessageerror = () => listener({ error: 'the worker could not receive its start-up data' });
      worker.postMessage(data);
      return { keepAlive: () => {} };
    },
  };
}
