import type { CpuStorage } from '../storage';

/** out = cap · tanh(x / cap), elementwise, at the storages' precision. */
export function softcapInto(x: CpuStorage, cap: number, out: CpuStorage): void {
  const xv = x.values;
  const ov = out.values;
  for (let i = 0; i < xv.length; i++) ov[i] = cap * Math.tanh(xv[i] / cap);
}
