import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const keyParams = new ParamLayout().scalar('count', 'u32').scalar('padded', 'u32').scalar('rows', 'u32');
const stepParams = new ParamLayout().scalar('padded', 'u32').scalar('span', 'u32').scalar('stride', 'u32');

/** Length of the sort: the next power of two, at least 1. */
export function paddedLength(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Sorts (id, position) pairs of i32 `ids` by id then position with a bitonic network;
 * ids outside [0, rows) and the padding sort last with id = i32 max. Returns storage of
 * `paddedLength(ids.size)` pairs (vec2<i32>) that the caller releases.
 */
export function sortIds(rt: GpuRuntime, ids: TensorInfo, rows: number): GpuStorage {
  const count = sizeOf(ids.shape);
  const padded = paddedLength(count);
  const pairs = rt.alloc(2 * padded, 'i32');
  const wg = rt.limits.workgroupSize;
  const keys = makeProgram(
    `sort-ids:keys:${wg}`,
    [{ name: 'ids', type: 'i32' }],
    [{ name: 'pairs', type: 'vec2<i32>' }],
    keyParams,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.padded) { return; }
  var id = 0x7fffffff;
  if (i < p.count) {
    let v = ids[i];
    if (v >= 0 && u32(v) < p.rows) { id = v; }
  }
  pairs[i] = vec2<i32>(id, i32(i));
}`,
  );
  rt.launch({
    program: keys,
    inputs: [rt.storage(ids.id)],
    outputs: [pairs],
    params: keyParams.pack({ count, padded, rows }),
    workgroups: Math.ceil(padded / wg),
  });
  const step = makeProgram(
    `sort-ids:step:${wg}`,
    [],
    [{ name: 'pairs', type: 'vec2<i32>' }],
    stepParams,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.padded) { return; }
  let l = i ^ p.stride;
  if (l <= i) { return; }
  let x = pairs[i];
  let y = pairs[l];
  let ascending = (i & p.span) == 0u;
  let greater = x.x > y.x || (x.x == y.x && x.y > y.y);
  if (greater == ascending) {
    pairs[i] = y;
    pairs[l] = x;
  }
}`,
  );
  for (let span = 2; span <= padded; span *= 2) {
    for (let stride = span / 2; stride >= 1; stride /= 2) {
      rt.launch({
        program: step,
        inputs: [],
        outputs: [pairs],
        params: stepParams.pack({ padded, span, stride }),
        workgroups: Math.ceil(padded / wg),
      });
    }
  }
  return pairs;
}
