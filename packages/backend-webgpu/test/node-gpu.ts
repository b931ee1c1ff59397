import { create, globals } from 'webgpu';
import { NO_ADAPTER_MESSAGE, WebGPUBackend } from '../src/index';

Object.assign(globalThis, globals);

/**
 * dawn.node's GPU object. It must stay referenced for the whole process: once collected,
 * dawn.node crashes at random.
 */
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
 * The shared Node backend (lavapipe on this machine), or undefined when there is no adapter:
 * then it fails on CI (CI=true) and prints how to get one elsewhere.
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

/** The Node backend; rejects (so the suite fails) when there is no adapter. */
export async function requireNodeBackend(): Promise<WebGPUBackend> {
  const backend = await nodeBackend();
  if (!backend) throw new Error(NO_ADAPTER_MESSAGE);
  return backend;
}

/**
 * A second backend on a device requested with no optional features (no subgroups, no shader-f16) and WebGPU's
 * default limits (8 storage buffers a shader stage), so the kernels' plain paths run too; undefined when there is
 * no adapter (as `nodeBackend` decides).
 */
export async function plainNodeBackend(): Promise<WebGPUBackend | undefined> {
  if (!(await nodeBackend())) return undefined;
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error(NO_ADAPTER_MESSAGE);
  return WebGPUBackend.create({ device: await adapter.requestDevice() });
}
