import { NO_ADAPTER_MESSAGE, WebGPUBackend } from '@loom/backend-webgpu';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

/**
 * dawn.node's GPU object. It must stay referenced for the whole process: once it is
 * garbage-collected, dawn.node crashes at random. Module scope keeps it alive.
 */
const gpu = create([]);

let shared: Promise<WebGPUBackend | undefined> | undefined;

/**
 * The process-wide WebGPU backend in Node, or undefined when no adapter is found (on Linux
 * without a GPU: apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1).
 */
export function nodeWebGPU(): Promise<WebGPUBackend | undefined> {
  shared ??= WebGPUBackend.create({ gpu }).catch((err: unknown) => {
    if (err instanceof Error && err.message === NO_ADAPTER_MESSAGE) return undefined;
    throw err;
  });
  return shared;
}

/** The process-wide WebGPU backend; throws the no-adapter message when there is none. */
export async function requireNodeWebGPU(): Promise<WebGPUBackend> {
  const backend = await nodeWebGPU();
  if (!backend) throw new Error(NO_ADAPTER_MESSAGE);
  return backend;
}

/**
 * The backend for a test suite: on CI (CI=true) a missing adapter is an error, so WebGPU
 * suites never skip silently there; elsewhere it returns undefined after printing how to get one.
 */
export async function webgpuForTests(): Promise<WebGPUBackend | undefined> {
  const backend = await nodeWebGPU();
  if (backend) return backend;
  if (process.env.CI === 'true') throw new Error(`WebGPU tests must run on CI: ${NO_ADAPTER_MESSAGE}`);
  console.warn(`skipping WebGPU tests: ${NO_ADAPTER_MESSAGE}`);
  return undefined;
}
