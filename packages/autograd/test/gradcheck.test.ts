import { CpuBackend } from '@loom/backend-cpu';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, gradcheck } from '../src/index';
import { caseInputs, gradCases } from './cases';

describe('gradcheck on the CPU backend', () => {
  const backend = new AutodiffBackend(new CpuBackend());
  for (const c of gradCases) {
    it(c.name, async () => {
      const inputs = caseInputs(backend, c, 3);
      const before = backend.liveCount();
      const result = await gradcheck(c.fn, inputs, { eps: 1e-2, atol: 2e-3, rtol: 2e-2 });
      expect(result.ok, result.message).toBe(true);
      expect(result.checked).toBeGreaterThan(0);
      expect(backend.liveCount(), 'tensors left alive by the gradient computation').toBe(before);
      for (const t of inputs) t.dispose();
    });
  }
});
