import type { DType } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { fillLaunch } from './fill-program';

/** Every element set to `value` (i32 values are truncated toward zero); zeros are filled at their first use. */
export function fill(rt: GpuRuntime, size: number, value: number, dtype: DType): GpuStorage {
  if (value === 0) return rt.zeros(size, dtype);
  const out = rt.alloc(size, dtype);
  rt.launch({ ...fillLaunch(dtype, size, value, rt.limits.workgroupSize), inputs: [], outputs: [out] });
  return out;
}
