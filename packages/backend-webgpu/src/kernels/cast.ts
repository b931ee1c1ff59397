import { type DType, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';

const params = new ParamLayout().scalar('count', 'u32');

/** Converts between dtypes; f32 to i32 truncates toward zero (WGSL conversion). */
export function cast(rt: GpuRuntime, x: TensorInfo, to: DType): GpuStorage {
  const count = sizeOf(x.shape);
  const out = rt.alloc(count, to);
  const wg = rt.limits.workgroupSize;
  const from = wgslType(x.dtype);
  const type = wgslType(to);
  const program = makeProgram(
    `cast:${from}:${type}:${wg}`,
    [{ name: 'x', type: from }],
    [{ name: 'out', type }],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = ${type}(x[i]);
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id)],
    outputs: [out],
    params: params.pack({ count }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
