import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { rowWorkgroupSize, workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout().scalar('rows', 'u32').scalar('width', 'u32').scalar('eps', 'f32');

/** (x - mean) * rsqrt(var + eps) * weight + bias over the last axis; mean and variance in two passes per row. */
export function layernorm(
  rt: GpuRuntime,
  x: TensorInfo,
  weight: TensorInfo,
  bias: TensorInfo,
  eps: number,
): GpuStorage {
  const size = sizeOf(x.shape);
  const width = x.shape[x.shape.length - 1];
  const rows = width === 0 ? 0 : size / width;
  const out = rt.alloc(size, 'f32');
  const wg = rowWorkgroupSize(width, rt.limits.workgroupSize);
  const program = makeProgram(
    `layernorm:${wg}`,
    [
      { name: 'x', type: 'f32' },
      { name: 'weight', type: 'f32' },
      { name: 'bias', type: 'f32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${workgroupReduce('sum_all', 'f32', wg, 'a + b')}
${entryPoint(wg)}
  if (gid >= p.rows) { return; }
  let base = gid * p.width;
  var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) { s += x[base + j]; }
  let mean = sum_all(s, lid) / f32(p.width);
  var q = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let c = x[base + j] - mean;
    q += c * c;
  }
  let inv = 1.0 / sqrt(sum_all(q, lid) / f32(p.width) + p.eps);
  for (var j = lid; j < p.width; j += ${wg}u) {
    out[base + j] = (x[base + j] - mean) * inv * weight[j] + bias[j];
  }
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id), rt.storage(weight.id), rt.storage(bias.id)],
    outputs: [out],
    params: params.pack({ rows, width, eps }),
    workgroups: rows,
  });
  return out;
}
