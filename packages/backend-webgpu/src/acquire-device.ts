import { type DeviceFeatures, optionalFeatures } from './device-features';
import { requestedLimits } from './device-limits';

export interface WebGPUBackendOptions {
  /** A device to run on; when given, `gpu` is ignored. */
  readonly device?: GPUDevice;
  /** Where to find an adapter: in Node, `create([])` from the `webgpu` package; defaults to `navigator.gpu`. */
  readonly gpu?: Pick<GPU, 'requestAdapter'>;
  readonly powerPreference?: GPUPowerPreference;
  /** Kernel paths to take instead of the detected ones (tests): e.g. `software: false` on a CPU rasteriser. */
  readonly features?: Partial<DeviceFeatures>;
}

export const NO_ADAPTER_MESSAGE =
  'no WebGPU adapter: in Node pass gpu from the `webgpu` package (needs Vulkan: apt-get install -t bookworm-backports ' +
  'mesa-vulkan-drivers libvulkan1); in Chromium start with --enable-unsafe-webgpu';

function navigatorGpu(): Pick<GPU, 'requestAdapter'> | undefined {
  if (typeof navigator === 'undefined') return undefined;
  return navigator.gpu ?? undefined;
}

/**
 * The device to run on: the one given, or a new one from the adapter with the limits Loom uses raised to the
 * adapter's maximum and the optional features (subgroups, shader-f16) it offers.
 */
export async function acquireDevice(options: WebGPUBackendOptions): Promise<GPUDevice> {
  if (options.device) return options.device;
  const gpu = options.gpu ?? navigatorGpu();
  if (!gpu) throw new Error(NO_ADAPTER_MESSAGE);
  const adapter = await gpu.requestAdapter(
    options.powerPreference ? { powerPreference: options.powerPreference } : undefined,
  );
  if (!adapter) throw new Error(NO_ADAPTER_MESSAGE);
  const requiredLimits: Record<string, number> = {};
  for (const name of requestedLimits) requiredLimits[name] = adapter.limits[name];
  const requiredFeatures = optionalFeatures.filter((name) => adapter.features.has(name));
  return adapter.requestDevice({ requiredLimits, requiredFeatures });
}
