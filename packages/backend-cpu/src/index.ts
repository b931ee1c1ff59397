export { CpuBackend } from './backend';
