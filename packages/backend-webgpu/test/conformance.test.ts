import { describeConformance } from '@loom/conformance';
import { describe, it } from 'vitest';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

if (backend) {
  describeConformance('webgpu (Node, dawn.node)', () => backend);
} else {
  describe.skip('conformance: webgpu (no adapter; see the warning above)', () => {
    it('needs a WebGPU adapter', () => {});
  });
}
