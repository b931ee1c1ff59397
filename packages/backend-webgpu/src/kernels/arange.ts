import type { DType } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';

const floatParams = new ParamLayout().scalar('count', 'u32').scalar('start', 'f32').scalar('step', 'f32');
const intParams = new ParamLayout().scalar('count', 'u32').scalar('start', 'i32').scalar('step', 'i32');

/**
 * start + i * step for i in [0, size). f32 computes in f32; i32 with integer start and step
 * computes exactly in i32, otherwise in f32 and truncates toward zero.
 */
export function arange(rt: GpuRuntime, size: number, start: number, step: number, dtype: DType): GpuStorage {
  const out = rt.alloc(size, dtype);
  const wg = rt.limits.workgroupSize;
  const exactInt = dtype === 'i32' && Number.isInteger(start) && Number.isInteger(step);
  const params = exactInt ? intParams : floatParams;
  const value = exactInt ? 'p.start + i32(i) * p.step' : `${wgslType(dtype)}(p.start + f32(i) * p.step)`;
  const program = makeProgram(
    `arange:${dtype}:${exactInt ? 'exact' : 'float'}:${wg}`,
    [],
    [{ name: 'out', type: wgslType(dtype) }],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = ${value};
}`,
  );
  rt.launch({
    program,
    inputs: [],
    outputs: [out],
    params: params.pack({ count: size, start, step }),
    workgroups: Math.ceil(size / wg),
  });
  return out;
}
