import { CpuBackend } from '@loom/backend-cpu';
import { type AnyFusedOp, fusedOps, kernelOf, type TensorInfo } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, gradcheck, valueAndGrad } from '../src/index';
import { caseInputs, fusedGradCases, recordedOps } from './cases';

/** A float64 CPU backend whose fused kernels count their calls. */
function countingCpu(): { cpu: CpuBackend; calls: Map<string, number> } {
  const cpu = new CpuBackend({ precision: 'f64' });
  const calls = new Map<string, number>();
  const counted: Record<string, unknown> = {};
  for (const op of Object.values(fusedOps) as AnyFusedOp[]) {
    const kernel = kernelOf(cpu, op);
    if (kernel === undefined) continue;
    counted[op.name] = (...args: [TensorInfo, ...unknown[]]) => {
      calls.set(op.name, (calls.get(op.name) ?? 0) + 1);
      return kernel(...args);
    };
  }
  Object.defineProperty(cpu, 'fused', { value: counted });
  return { cpu, calls };
}

describe('fused ops with a backward rule', () => {
  it('are all offered as kernels by the CPU backend, so the checks below run every one', () => {
    const cpu = new CpuBackend();
    expect(recordedOps.filter((op) => kernelOf(cpu, op) === undefined).map((op) => op.name)).toEqual([]);
    expect(recordedOps.length).toBeGreaterThan(0);
  });

  for (const c of fusedGradCases) {
    it(`${c.name}: runs the fused kernel while the tape is open, not the composite`, () => {
      const { cpu, calls } = countingCpu();
      const backend = new AutodiffBackend(cpu);
      const inputs = caseInputs(backend, c, 5);
      const params = inputs.filter((t) => t.dtype === 'f32');
      const { value, grads } = valueAndGrad(() => c.fn(inputs), params);
      const op = c.name.split(' ')[1];
      expect(calls.get(op) ?? 0, `${op} kernel calls while recording`).toBeGreaterThan(0);
      for (const t of [value, ...grads, ...inputs]) t.dispose();
    });

    it(`${c.name}: its rule matches finite differences in float64`, async () => {
      const backend = new AutodiffBackend(new CpuBackend({ precision: 'f64' }));
      const inputs = caseInputs(backend, c, 3);
      const before = backend.liveCount();
      const result = await gradcheck(c.fn, inputs, { eps: 1e-6, atol: 1e-8, rtol: 1e-7 });
      expect(result.ok, result.message).toBe(true);
      expect(result.checked).toBeGreaterThan(0);
      expect(backend.liveCount(), 'tensors left alive by the gradient computation').toBe(before);
      for (const t of inputs) t.dispose();
    });
  }
});
