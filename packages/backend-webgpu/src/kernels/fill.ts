import type { DType } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';

const layouts = {
  f32: new ParamLayout().scalar('count', 'u32').scalar('value', 'f32'),
  i32: new ParamLayout().scalar('count', 'u32').scalar('value', 'i32'),
};

/** Every element set to `value` (i32 values are truncated toward zero). */
export function fill(rt: GpuRuntime, size: number, value: number, dtype: DType): GpuStorage {
  // Zeros take their buffer, filled, at their first use (see GpuRuntime.zeros).
  if (value === 0) return rt.zeros(size, dtype);
  const out = rt.alloc(size, dtype);
  fillInto(rt, out, value);
  return out;
}

/** Every element of `out` set to `value` (i32 values are truncated toward zero): one dispatch. */
export function fillInto(rt: GpuRuntime, out: GpuStorage, value: number): void {
  const { size, dtype } = out;
  const wg = rt.limits.workgroupSize;
  const type = wgslType(dtype);
  const params = layouts[dtype];
  const program = makeProgram(
    `fill:${type}:${wg}`,
    [],
    [{ name: 'out', type }],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = p.value;
}`,
  );
  const stored = dtype === 'f32' ? value : Math.trunc(value) | 0;
  rt.launch({
    program,
    inputs: [],
    outputs: [out],
    params: params.pack({ count: size, value: stored }),
    workgroups: Math.ceil(size / wg),
  });
}
