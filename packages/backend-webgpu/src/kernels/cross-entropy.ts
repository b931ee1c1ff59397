import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { rowMaxSumExp } from './row-max-sum-exp';
import { rowWorkgroupSize, workgroupReduce } from './workgroup-reduce';

const rowParams = new ParamLayout().scalar('rows', 'u32').scalar('width', 'u32').scalar('ignoreIndex', 'i32');
const meanParams = new ParamLayout().scalar('rows', 'u32');

/**
 * Mean over rows whose target is not `ignoreIndex` of -log softmax(logits [N, V])[target], as a
 * scalar (0 when every row is ignored). A first kernel writes (loss, counted) per row, one
 * workgroup per row; a second sums those in one workgroup. A target outside [0, V) that is not
 * ignored counts with loss 0, as in the composite.
 */
export function softmaxCrossEntropy(
  rt: GpuRuntime,
  logits: TensorInfo,
  targets: TensorInfo,
  ignoreIndex: number,
): GpuStorage {
  const [rows, width] = logits.shape;
  const perRow = rt.alloc(2 * rows, 'f32');
  const wg = rt.limits.workgroupSize;
  const rowWg = rowWorkgroupSize(width, wg);
  const rowLoss = makeProgram(
    `cross-entropy:rows:${rowWg}`,
    [
      { name: 'x', type: 'f32' },
      { name: 'targets', type: 'i32' },
    ],
    [{ name: 'losses', type: 'vec2<f32>' }],
    rowParams,
    () => {
      const stats = rowMaxSumExp(rowWg);
      return `${stats.declarations}
${entryPoint(rowWg)}
  if (gid >= p.rows) { return; }
  let base = gid * p.width;
${stats.statements}
  if (lid == 0u) {
    let t = targets[gid];
    var loss = 0.0;
    if (t >= 0 && u32(t) < p.width) { loss = m + log(s) - x[base + u32(t)]; }
    losses[gid] = vec2<f32>(loss, select(1.0, 0.0, t == p.ignoreIndex));
  }
}`;
    },
  );
  rt.launch({
    program: rowLoss,
    inputs: [rt.storage(logits.id), rt.storage(targets.id)],
    outputs: [perRow],
    params: rowParams.pack({ rows, width, ignoreIndex }),
    workgroups: rows,
  });
  const out = rt.alloc(1, 'f32');
  const mean = makeProgram(
    `cross-entropy:mean:${wg}`,
    [{ name: 'losses', type: 'vec2<f32>' }],
    [{ name: 'out', type: 'f32' }],
    meanParams,
    () => `${workgroupReduce('sum_all', 'vec2<f32>', wg, 'a + b')}
${entryPoint(wg)}
  var s = vec2<f32>(0.0, 0.0);
  for (var r = lid; r < p.rows; r += ${wg}u) {
    let v = losses[r];
    s += vec2<f32>(v.x * v.y, v.y);
  }
  s = sum_all(s, lid);
  if (lid == 0u) { out[0] = s.x / max(s.y, 1.0); }
}`,
  );
  rt.launch({
    program: mean,
    inputs: [perRow],
    outputs: [out],
    params: meanParams.pack({ rows }),
    workgroups: 1,
  });
  rt.release(perRow);
  return out;
}
