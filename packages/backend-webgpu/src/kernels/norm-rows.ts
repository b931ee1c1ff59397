import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { rowWorkgroupSize, workgroupReduce } from './workgroup-reduce';

/** The parameters of a kernel over the rows of x [..., width] (`normRows`, and the norms' column passes). */
export const normRowsParams = new ParamLayout()
  .scalar('rows', 'u32')
  .scalar('width', 'u32')
  .scalar('eps', 'f32');

/**
 * A normalisation over the last axis of x, one workgroup per row. `body(wg)` is the WGSL of one
 * row (`gid`): it reads x[base + j] and the per-column `weights` (bound under their names), may call
 * sum_all(v, lid) for a workgroup sum, and writes out[base + j] for j = lid, lid + wg, ... (or, with
 * `outPerRow`, its own `outPerRow` values of out [rows, outPerRow]).
 */
export function normRows(
  rt: GpuRuntime,
  name: string,
  x: TensorInfo,
  weights: Readonly<Record<string, TensorInfo>>,
  eps: number,
  body: (wg: number) => string,
  outPerRow?: number,
): GpuStorage {
  const size = sizeOf(x.shape);
  const width = x.shape[x.shape.length - 1];
  const rows = width === 0 ? 0 : size / width;
  const out = rt.alloc(outPerRow === undefined ? size : rows * outPerRow, 'f32');
  const wg = rowWorkgroupSize(width, rt.limits.workgroupSize);
  const names = Object.keys(weights);
  const program = makeProgram(
    `${name}:${wg}`,
    [{ name: 'x', type: 'f32' }, ...names.map((n) => ({ name: n, type: 'f32' as const }))],
    [{ name: 'out', type: 'f32' }],
    normRowsParams,
    () => `${workgroupReduce('sum_all', 'f32', wg, 'a + b')}
${entryPoint(wg)}
  if (gid >= p.rows) { return; }
  let base = gid * p.width;
${body(wg)}
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id), ...names.map((n) => rt.storage(weights[n].id))],
    outputs: [out],
    params: normRowsParams.pack({ rows, width, eps }),
    workgroups: rows,
  });
  return out;
}
