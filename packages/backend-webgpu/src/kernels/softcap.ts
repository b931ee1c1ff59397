import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { TANH } from './math';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('cap', 'f32');

/** cap · tanh(x / cap), elementwise, one thread per element. */
export function softcap(rt: GpuRuntime, x: TensorInfo, cap: number): GpuStorage {
  const count = sizeOf(x.shape);
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `softcap:${wg}`,
    [{ name: 'x', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${TANH}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = p.cap * tanh_(x[i] / p.cap);
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id)],
    outputs: [out],
    params: params.pack({ count, cap }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
