// The published types entry: dist/index.d.ts names WebGPU's global types (GPUDevice, GPU, ...) but
// tsup drops the source's reference to them, so this file brings them in for consumers.
/// <reference types="@webgpu/types" />
export * from './dist/index.js';
