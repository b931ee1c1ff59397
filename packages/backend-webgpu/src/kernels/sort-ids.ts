import { sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const localParams = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('rows', 'u32')
  .scalar('block', 'u32')
  .scalar('firstSpan', 'u32')
  .scalar('lastSpan', 'u32');
const stepParams = new ParamLayout().scalar('padded', 'u32').scalar('span', 'u32').scalar('stride', 'u32');

/** Length of the sort: the next power of two, at least 1. */
export function paddedLength(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** Whether pair x sorts after pair y: by id, then by position. */
const GREATER = `fn greater(x: vec2<i32>, y: vec2<i32>) -> bool {
  return x.x > y.x || (x.x == y.x && x.y > y.y);
}`;

/**
 * A workgroup's bitonic steps on its block of `p.block` pairs in shared memory: for each span from p.firstSpan to
 * p.lastSpan, every stride below both span and block (the steps whose pairs stay inside the block), one compare
 * per thread between barriers. `load(e)` gives element e of the block; the block is written back to `pairs`.
 */
function localCode(wg: number, load: string): string {
  return `${GREATER}
var<workgroup> block: array<vec2<i32>, ${2 * wg}>;
${entryPoint(wg)}
  let base = gid * p.block;
  for (var e = lid; e < p.block; e += ${wg}u) { block[e] = ${load}; }
  var span = p.firstSpan;
  loop {
    if (span > p.lastSpan) { break; }
    var stride = min(span / 2u, p.block / 2u);
    loop {
      if (stride == 0u) { break; }
      workgroupBarrier();
      if (lid < p.block / 2u) {
        let i = (lid / stride) * 2u * stride + lid % stride;
        let l = i + stride;
        let x = block[i];
        let y = block[l];
        if (greater(x, y) == (((base + i) & span) == 0u)) {
          block[i] = y;
          block[l] = x;
        }
      }
      stride = stride / 2u;
    }
    span = span * 2u;
  }
  workgroupBarrier();
  for (var e = lid; e < p.block; e += ${wg}u) { pairs[base + e] = block[e]; }
}`;
}

/** The pair of element i: (id, i), with ids outside [0, rows) and the padding given id = i32 max (sorted last). */
const KEY = `fn key(i: u32) -> vec2<i32> {
  var id = 0x7fffffff;
  if (i < p.count) {
    let v = ids[i];
    if (v >= 0 && u32(v) < p.rows) { id = v; }
  }
  return vec2<i32>(id, i32(i));
}`;

/**
 * Sorts (id, position) pairs of i32 `ids` by id then position with a bitonic network; ids outside [0, rows) and the
 * padding sort last with id = i32 max. The steps whose pairs lie within a block of two pairs a thread run in
 * shared memory, many to a dispatch: a sort of n pairs takes 1 + Σ (1 + log2(span / block)) dispatches over the
 * spans past the block, not log2(n)·(log2(n) + 1)/2 + 1 (768 ids: 3, not 56). Returns storage of
 * `paddedLength(ids.size)` pairs (vec2<i32>) that the caller releases.
 */
export function sortIds(rt: GpuRuntime, ids: TensorInfo, rows: number): GpuStorage {
  const count = sizeOf(ids.shape);
  const padded = paddedLength(count);
  const pairs = rt.alloc(2 * padded, 'i32');
  const wg = rt.limits.workgroupSize;
  const block = Math.min(2 * wg, padded);
  const groups = padded / block;
  rt.launch({
    program: makeProgram(
      `sort-ids:local-keys:${wg}`,
      [{ name: 'ids', type: 'i32' }],
      [{ name: 'pairs', type: 'vec2<i32>' }],
      localParams,
      () => `${KEY}\n${localCode(wg, 'key(base + e)')}`,
    ),
    inputs: [rt.storage(ids.id)],
    outputs: [pairs],
    params: localParams.pack({ count, rows, block, firstSpan: 2, lastSpan: block }),
    workgroups: groups,
  });
  const step = makeProgram(
    `sort-ids:step:${wg}`,
    [],
    [{ name: 'pairs', type: 'vec2<i32>' }],
    stepParams,
    () => `${GREATER}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.padded) { return; }
  let l = i ^ p.stride;
  if (l <= i) { return; }
  let x = pairs[i];
  let y = pairs[l];
  if (greater(x, y) == ((i & p.span) == 0u)) {
    pairs[i] = y;
    pairs[l] = x;
  }
}`,
  );
  const merge = makeProgram(
    `sort-ids:local-merge:${wg}`,
    [],
    [{ name: 'pairs', type: 'vec2<i32>' }],
    localParams,
    () => localCode(wg, 'pairs[base + e]'),
  );
  for (let span = 2 * block; span <= padded; span *= 2) {
    for (let stride = span / 2; stride >= block; stride /= 2) {
      rt.launch({
        program: step,
        inputs: [],
        outputs: [pairs],
        params: stepParams.pack({ padded, span, stride }),
        workgroups: Math.ceil(padded / wg),
      });
    }
    rt.launch({
      program: merge,
      inputs: [],
      outputs: [pairs],
      params: localParams.pack({ count, rows, block, firstSpan: span, lastSpan: span }),
      workgroups: groups,
    });
  }
  return pairs;
}
