/** What the device offers beyond core WebGPU, and what kind of device it is, as the kernels choose by it. */
export interface DeviceFeatures {
  /** `subgroups`: matvec sums a row's partial dot products in registers instead of a shared-memory tree. */
  readonly subgroups: boolean;
  /** `shader-f16`: half-precision arithmetic in WGSL (detected and reported; no kernel uses it yet). */
  readonly shaderF16: boolean;
  /**
   * A CPU rasteriser (lavapipe/llvmpipe, SwiftShader): its threads are SIMD lanes of CPU cores, so kernels
   * give each thread a whole row (matvec) rather than the coalesced, workgroup-per-row layout a GPU needs.
   */
  readonly software: boolean;
}

/** Features a new device is requested with when the adapter offers them. */
export const optionalFeatures = ['subgroups', 'shader-f16'] as const satisfies readonly GPUFeatureName[];

const SOFTWARE_NAMES = /llvmpipe|lavapipe|swiftshader/i;

/** The features of `device`; `overrides` choose other kernel paths (tests), but cannot add a missing feature. */
export function readFeatures(device: GPUDevice, overrides: Partial<DeviceFeatures> = {}): DeviceFeatures {
  const info: Partial<GPUAdapterInfo> & { readonly isFallbackAdapter?: boolean } = device.adapterInfo ?? {};
  const detected: DeviceFeatures = {
    subgroups: device.features.has('subgroups'),
    shaderF16: device.features.has('shader-f16'),
    software:
      info.isFallbackAdapter === true ||
      info.architecture === 'software' ||
      SOFTWARE_NAMES.test(`${info.description ?? ''} ${info.device ?? ''}`),
  };
  for (const name of ['subgroups', 'shaderF16'] as const) {
    if (overrides[name] === true && !detected[name]) {
      throw new Error(`webgpu: the device lacks ${name}; request a device with it or leave it off`);
    }
  }
  return { ...detected, ...overrides };
}
