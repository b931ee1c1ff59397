import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { paddedLength, sortIds } from './sort-ids';

const params = new ParamLayout().scalar('count', 'u32').scalar('rowSize', 'u32').scalar('padded', 'u32');

/**
 * out [numRows, rowSize] = 0, then out[ids[i]] += src[i] for in-range ids. The ids are sorted
 * (stably) first; each output element then binary-searches its row's run of positions and sums
 * them in order, so duplicates are exact and results are deterministic without float atomics.
 */
export function scatterAdd(rt: GpuRuntime, src: TensorInfo, ids: TensorInfo, numRows: number): GpuStorage {
  const idCount = sizeOf(ids.shape);
  const rowSize = idCount === 0 ? sizeOf(src.shape.slice(ids.shape.length)) : sizeOf(src.shape) / idCount;
  const count = numRows * rowSize;
  const out = rt.alloc(count, 'f32');
  if (count === 0) return out;
  const pairs = sortIds(rt, ids, numRows);
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `scatter-add:${wg}`,
    [
      { name: 'src', type: 'f32' },
      { name: 'pairs', type: 'vec2<i32>' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let row = i32(o / p.rowSize);
  let column = o % p.rowSize;
  var lo = 0u;
  var hi = p.padded;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (pairs[mid].x < row) { lo = mid + 1u; } else { hi = mid; }
  }
  var acc = 0.0;
  for (var k = lo; k < p.padded && pairs[k].x == row; k++) {
    acc += src[u32(pairs[k].y) * p.rowSize + column];
  }
  out[o] = acc;
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(src.id), pairs],
    outputs: [out],
    params: params.pack({ count, rowSize, padded: paddedLength(idCount) }),
    workgroups: Math.ceil(count / wg),
  });
  rt.release(pairs);
  return out;
}
