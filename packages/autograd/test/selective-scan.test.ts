import { CpuBackend } from '@loom/backend-cpu';
import { type Backend, randn, scope, selectiveScan, type Tensor } from '@loom/tensor';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, valueAndGrad } from '../src/index';

const gpu = await webgpuForTests();

/** The value and the six input gradients of a weighted sum of selectiveScan's output on `inner`. */
async function scanGradients(inner: Backend): Promise<{ value: number; grads: Float32Array[] }> {
  const backend = new AutodiffBackend(inner);
  const [b, t, d, n] = [2, 19, 70, 5];
  const inputs = scope(() => [
    randn([b, t, d], { seed: 1, backend }),
    randn([b, t, d], { seed: 2, backend }).abs().mul(0.3).add(0.01),
    randn([d, n], { seed: 3, backend }).abs().add(0.5).neg(),
    randn([b, t, n], { seed: 4, backend }),
    randn([b, t, n], { seed: 5, backend }),
    randn([d], { seed: 6, backend }),
  ]);
  const weights = randn([b, t, d], { seed: 7, backend });
  const { value, grads } = valueAndGrad(
    () =>
      scope(() =>
        selectiveScan(...(inputs as [Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]))
          .mul(weights)
          .sum(),
      ),
    inputs,
  );
  const out = {
    value: await value.item(),
    grads: await Promise.all(grads.map(async (g) => Float32Array.from(await g.data()))),
  };
  for (const x of [value, weights, ...grads, ...inputs]) x.dispose();
  return out;
}

describe.skipIf(!gpu)('selectiveScan gradients on WebGPU (its fused backward kernels)', () => {
  it('match the CPU gradients and leave no tensor alive', async () => {
    if (!gpu) return;
    const cpu = await scanGradients(new CpuBackend());
    const before = gpu.liveCount();
    const webgpu = await scanGradients(gpu);
    expect(gpu.liveCount(), 'no tensor left alive on the GPU').toBe(before);
    expect(webgpu.value).toBeCloseTo(cpu.value, 3);
    cpu.grads.forEach((g, i) => {
      const worst = g.reduce(
        (w, v, j) => Math.max(w, Math.abs(v - webgpu.grads[i][j]) - 1e-4 * Math.abs(v)),
        0,
      );
      expect(worst, `gradient of input ${i}`).toBeLessThan(1e-4);
    });
  });
});
