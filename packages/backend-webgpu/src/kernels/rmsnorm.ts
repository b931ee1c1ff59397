import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { rowWorkgroupSize, workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout().scalar('rows', 'u32').scalar('width', 'u32').scalar('eps', 'f32');

/** x * rsqrt(mean(x^2) + eps) * weight over the last axis, one workgroup per row. */
export function rmsnorm(rt: GpuRuntime, x: TensorInfo, weight: TensorInfo, eps: number): GpuStorage {
  const size = sizeOf(x.shape);
  const width = x.shape[x.shape.length - 1];
  const rows = width === 0 ? 0 : size / width;
  const out = rt.alloc(size, 'f32');
  const wg = rowWorkgroupSize(width, rt.limits.workgroupSize);
  const program = makeProgram(
    `rmsnorm:${wg}`,
    [
      { name: 'x', type: 'f32' },
      { name: 'weight', type: 'f32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${workgroupReduce('sum_all', 'f32', wg, 'a + b')}
${entryPoint(wg)}
  if (gid >= p.rows) { return; }
  let base = gid * p.width;
  var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let v = x[base + j];
    s += v * v;
  }
  s = sum_all(s, lid);
  let inv = 1.0 / sqrt(s / f32(p.width) + p.eps);
  for (var j = lid; j < p.width; j += ${wg}u) { out[base + j] = x[base + j] * inv * weight[j]; }
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id), rt.storage(weight.id)],
    outputs: [out],
    params: params.pack({ rows, width, eps }),
    workgroups: rows,
  });
  return out;
}
