export type { CpuBackendOptions } from './backend';
export { CpuBackend } from './backend';
export type { CpuPrecision } from './precision';
export { kernelModuleText } from './wasm/runtime';
export type { CpuKernelSettings } from './wasm/settings';
