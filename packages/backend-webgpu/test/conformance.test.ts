import { describeConformance } from '@loom/conformance';
import { describe, expect, it } from 'vitest';
import type { DeviceFeatures } from '../src/device-features';
import { WebGPUBackend } from '../src/index';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

/**
 * The kernels that take another path on a GPU than on a CPU rasteriser (a workgroup per output row or unit, its
 * sums through subgroups or shared memory), forced on this device so the kit checks the GPU's code too.
 */
const gpuPaths: readonly { readonly name: string; readonly features: Partial<DeviceFeatures> }[] = [
  { name: 'GPU path, shared-memory sums', features: { software: false, subgroups: false } },
  { name: 'GPU path, subgroup sums', features: { software: false, subgroups: true } },
];
const rowKernelOps = ['matmul', 'linear', 'swigluBlock', 'attentionStep', 'halfMatmul', 'quantizedMatmul'];

if (backend) {
  describeConformance('webgpu (Node, dawn.node)', () => backend);
  for (const path of gpuPaths) {
    if (path.features.subgroups && !backend.device.features.has('subgroups')) {
      it(`${path.name}: not on this adapter, which lacks subgroups (never chosen)`, () => {
        expect(backend.features.subgroups).toBe(false);
      });
      continue;
    }
    describeConformance(
      `webgpu, ${path.name}`,
      () => WebGPUBackend.create({ device: backend.device, features: path.features }),
      { only: rowKernelOps },
    );
  }
} else {
  describe.skip('conformance: webgpu (no adapter; see the warning above)', () => {
    it('needs a WebGPU adapter', () => {});
  });
}
