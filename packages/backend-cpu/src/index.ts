export type { CpuBackendOptions } from './backend';
export { CpuBackend } from './backend';
export type { CpuPrecision } from './precision';
export { cpuThreadsReady } from './threads/shared-pool';
export type { CpuKernelSettings } from './wasm/settings';
export { configureCpuKernels, cpuKernelSettings } from './wasm/settings';
