import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('per', 'u32')
  .scalar('slot', 'u32')
  .scalar('square', 'u32');

/** Values each thread of a workgroup adds before the workgroup's sum: a workgroup covers this many times its size. */
const PER_THREAD = 64;

/**
 * Workgroup g adds x[g·per, (g+1)·per) (their squares when `square`) and writes the sum to out[slot + g]; threads
 * step through the span side by side, then sum in shared memory.
 */
function sumCode(wg: number): string {
  return `${workgroupReduce('sum_all', 'f32', wg, 'a + b')}
${entryPoint(wg)}
  let start = gid * p.per;
  let end = min(start + p.per, p.count);
  var acc = 0.0;
  for (var i = start + lid; i < end; i += ${wg}u) {
    let v = x[i];
    acc += select(v, v * v, p.square != 0u);
  }
  let total = sum_all(acc, lid);
  if (lid == 0u) { out[p.slot + gid] = total; }
}`;
}

/** One pass of the sum: `groups` workgroups over `count` values of x into out[slot..]. */
function sumPass(
  rt: GpuRuntime,
  x: GpuStorage,
  out: GpuStorage,
  values: { count: number; per: number; slot: number; square: number },
): void {
  const wg = rt.limits.workgroupSize;
  rt.launch({
    program: makeProgram(
      `sum-squares:${wg}`,
      [{ name: 'x', type: 'f32' }],
      [{ name: 'out', type: 'f32' }],
      params,
      () => sumCode(wg),
    ),
    inputs: [x],
    outputs: [out],
    params: params.pack(values),
    workgroups: Math.ceil(values.count / values.per),
  });
}

/**
 * totals[index] = Σ x²: one workgroup where x fits its span (PER_THREAD values a thread), else a workgroup per span
 * writing partial sums, then one workgroup adding those in order. Deterministic: no atomics.
 */
function sumSquaresInto(rt: GpuRuntime, totals: TensorInfo, x: TensorInfo, index: number): void {
  const count = sizeOf(x.shape);
  const out = rt.storage(totals.id);
  const per = rt.limits.workgroupSize * PER_THREAD;
  if (count <= per) {
    sumPass(rt, rt.storage(x.id), out, { count, per: Math.max(1, count), slot: index, square: 1 });
    return;
  }
  const groups = Math.ceil(count / per);
  const partials = rt.alloc(groups, 'f32');
  sumPass(rt, rt.storage(x.id), partials, { count, per, slot: 0, square: 1 });
  sumPass(rt, partials, out, { count: groups, per: groups, slot: index, square: 0 });
  rt.release(partials);
}

/** Sums of squares into a slot (`sumSquaresInto` above). */
export function sumSquaresKernels(rt: GpuRuntime): Pick<FusedKernels, 'sumSquaresInto'> {
  return { sumSquaresInto: (totals, x, index) => sumSquaresInto(rt, totals, x, index) };
}
