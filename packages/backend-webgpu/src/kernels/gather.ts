import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('rowSize', 'u32').scalar('rows', 'u32');

/** Rows of table [rows, ...rest] picked by i32 ids; out-of-range ids give zero rows. One thread per output element. */
export function gather(rt: GpuRuntime, table: TensorInfo, ids: TensorInfo): GpuStorage {
  const rows = table.shape[0];
  const rowSize = rows === 0 ? sizeOf(table.shape.slice(1)) : sizeOf(table.shape) / rows;
  const count = sizeOf(ids.shape) * rowSize;
  const out = rt.alloc(count, table.dtype);
  const wg = rt.limits.workgroupSize;
  const type = wgslType(table.dtype);
  const program = makeProgram(
    `gather:${type}:${wg}`,
    [
      { name: 'table', type },
      { name: 'ids', type: 'i32' },
    ],
    [{ name: 'out', type }],
    params,
    () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let id = ids[o / p.rowSize];
  var v: ${type} = ${type}(0);
  if (id >= 0 && u32(id) < p.rows) { v = table[u32(id) * p.rowSize + o % p.rowSize]; }
  out[o] = v;
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(table.id), rt.storage(ids.id)],
    outputs: [out],
    params: params.pack({ count, rowSize, rows }),
    workgroups: Math.ceil(count / wg),
    // Each id reads its one row (at most, as an out-of-range id reads none), not the whole table it binds.
    readBytes: 4 * (count + sizeOf(ids.shape)),
  });
  return out;
}
