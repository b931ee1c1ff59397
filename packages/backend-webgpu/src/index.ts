/// <reference types="@webgpu/types" />

export type { WebGPUBackendOptions } from './acquire-device';
export { NO_ADAPTER_MESSAGE } from './acquire-device';
export type { DeviceFeatures } from './device-features';
export type { DeviceLimits } from './device-limits';
export type { GpuCounts } from './gpu-counters';
export type { WebGPUStats } from './runtime';
export { WebGPUBackend } from './webgpu-backend';
