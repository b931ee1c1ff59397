import { gelu } from '../gelu-formula';
import type { CpuStorage } from '../storage';

/** out = gelu(gate) · up (GELU's tanh form), elementwise, at the storages' precision. */
export function gegluInto(gate: CpuStorage, up: CpuStorage, out: CpuStorage): void {
  const gv = gate.values;
  const uv = up.values;
  const ov = out.values;
  for (let i = 0; i < gv.length; i++) ov[i] = gelu(gv[i]) * uv[i];
}
