/** The adapter limits the kernels depend on, read from the device rather than assumed. */
export interface DeviceLimits {
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly maxUniformBufferBindingSize: number;
  readonly minUniformBufferOffsetAlignment: number;
  readonly maxWorkgroupsPerDimension: number;
  readonly maxWorkgroupStorageSize: number;
  readonly maxInvocationsPerWorkgroup: number;
  readonly maxStorageBuffersPerShaderStage: number;
  /** Threads per workgroup of the one-dimensional kernels: a power of two, at most 256. */
  readonly workgroupSize: number;
}

/** Names of the limits a device is requested with at the adapter's maximum. */
export const requestedLimits = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

function largestPowerOfTwoAtMost(n: number): number {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

export function readLimits(limits: GPUSupportedLimits): DeviceLimits {
  const threads = Math.min(256, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  if (threads < 64) {
    throw new Error(
      `webgpu: the device allows only ${threads} threads per workgroup; Loom's kernels need at least 64 (WebGPU guarantees 256)`,
    );
  }
  return {
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    maxBufferSize: limits.maxBufferSize,
    maxUniformBufferBindingSize: limits.maxUniformBufferBindingSize,
    minUniformBufferOffsetAlignment: limits.minUniformBufferOffsetAlignment,
    maxWorkgroupsPerDimension: limits.maxComputeWorkgroupsPerDimension,
    maxWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
    maxInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
    maxStorageBuffersPerShaderStage: limits.maxStorageBuffersPerShaderStage,
    workgroupSize: largestPowerOfTwoAtMost(threads),
  };
}
