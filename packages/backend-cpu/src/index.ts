export { CpuBackend } from './backend';
export { cpuThreadsReady } from './threads/shared-pool';
export type { CpuKernelSettings } from './wasm/settings';
export { configureCpuKernels, cpuKernelSettings } from './wasm/settings';
