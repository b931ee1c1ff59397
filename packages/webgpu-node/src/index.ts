export { nodeWebGPU, requireNodeWebGPU, webgpuForTests } from './node-backend';
