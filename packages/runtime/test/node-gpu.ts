import { NO_ADAPTER_MESSAGE, WebGPUBackend } from '@loom/backend-webgpu';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

/** dawn.node's GPU object; it must stay referenced for the whole process (dawn.node crashes once it is collected). */
const gpu = create([]);

let cached: Promise<WebGPUBackend | undefined> | undefined;

async function tryCreate(): Promise<WebGPUBackend | undefined> {
  try {
    return await WebGPUBackend.create({ gpu });
  } catch (err) {
    if (err instanceof Error && err.message === NO_ADAPTER_MESSAGE) return undefined;
    throw err;
  }
}

/**
 * The shared Node WebGPU backend (lavapipe here), or undefined when there is no adapter: then it fails on CI
 * (CI=true) and otherwise prints that the WebGPU tests are skipped.
 */
export function nodeBackend(): Promise<WebGPUBackend | undefined> {
  cached ??= tryCreate().then((backend) => {
    if (backend) return backend;
    if (process.env.CI === 'true') throw new Error(`WebGPU tests must run on CI: ${NO_ADAPTER_MESSAGE}`);
    console.warn(`skipping WebGPU tests: ${NO_ADAPTER_MESSAGE}`);
    return undefined;
  });
  return cached;
}
