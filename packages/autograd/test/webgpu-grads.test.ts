import { CpuBackend } from '@loom/backend-cpu';
import type { Backend } from '@loom/tensor';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, valueAndGrad } from '../src/index';
import { caseInputs, type GradCase, gradCases } from './cases';

const gpu = await webgpuForTests();

async function gradients(inner: Backend, c: GradCase): Promise<{ value: number; grads: Float32Array[] }> {
  const backend = new AutodiffBackend(inner);
  const inputs = caseInputs(backend, c, 3);
  const params = inputs.filter((t) => t.dtype === 'f32');
  const { value, grads } = valueAndGrad(() => c.fn(inputs), params);
  const out = {
    value: await value.item(),
    grads: await Promise.all(grads.map(async (g) => Float32Array.from(await g.data()))),
  };
  for (const t of [value, ...grads, ...inputs]) t.dispose();
  return out;
}

describe.skipIf(!gpu)('WebGPU gradients match CPU gradients', () => {
  for (const c of gradCases) {
    it(c.name, async () => {
      if (!gpu) return;
      const cpu = await gradients(new CpuBackend(), c);
      const before = gpu.liveCount();
      const webgpu = await gradients(gpu, c);
      expect(gpu.liveCount(), 'no tensor left alive on the GPU').toBe(before);
      expect(webgpu.value).toBeCloseTo(cpu.value, 4);
      cpu.grads.forEach((g, i) => {
        const worst = g.reduce(
          (w, v, j) => Math.max(w, Math.abs(v - webgpu.grads[i][j]) - 1e-3 * Math.abs(v)),
          0,
        );
        expect(worst, `gradient of input ${i}`).toBeLessThan(1e-4);
      });
    });
  }
});
