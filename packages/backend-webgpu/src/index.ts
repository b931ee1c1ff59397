/// <reference types="@webgpu/types" />

export type { WebGPUBackendOptions } from './acquire-device';
export { NO_ADAPTER_MESSAGE } from './acquire-device';
export type { DeviceLimits } from './device-limits';
export type { WebGPUStats } from './runtime';
export { WebGPUBackend } from './webgpu-backend';
