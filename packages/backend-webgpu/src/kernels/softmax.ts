import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { softmaxCrossEntropy } from './cross-entropy';
import { entryPoint, makeProgram } from './program';
import { rowMaxSumExp } from './row-max-sum-exp';
import { rowWorkgroupSize } from './workgroup-reduce';

const params = new ParamLayout().scalar('rows', 'u32').scalar('width', 'u32');

type SoftmaxKind = 'softmax' | 'logSoftmax';

/**
 * Softmax or log-softmax over the last axis, one workgroup per row: the row maximum and the
 * sum of exp(x - max) are shared-memory reductions, so rows of 32000 logits stay exact to rounding.
 */
function softmax(rt: GpuRuntime, kind: SoftmaxKind, x: TensorInfo): GpuStorage {
  const size = sizeOf(x.shape);
  const width = x.shape[x.shape.length - 1] ?? 1;
  const rows = width === 0 ? 0 : size / width;
  const out = rt.alloc(size, 'f32');
  const wg = rowWorkgroupSize(width, rt.limits.workgroupSize);
  const write = kind === 'softmax' ? 'exp(x[base + j] - m) * inv' : 'x[base + j] - m - logSum';
  const program = makeProgram(
    `${kind}:${wg}`,
    [{ name: 'x', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    params,
    () => {
      const stats = rowMaxSumExp(wg);
      return `${stats.declarations}
${entryPoint(wg)}
  if (gid >= p.rows) { return; }
  let base = gid * p.width;
${stats.statements}
  let inv = 1.0 / s;
  let logSum = log(s);
  for (var j = lid; j < p.width; j += ${wg}u) { out[base + j] = ${write}; }
}`;
    },
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id)],
    outputs: [out],
    params: params.pack({ rows, width }),
    workgroups: rows,
  });
  return out;
}

/** Softmax and log-softmax over the last axis, and the cross-entropy loss (`softmaxCrossEntropy`). */
export function softmaxKernels(
  rt: GpuRuntime,
): Pick<FusedKernels, 'softmax' | 'logSoftmax' | 'softmaxCrossEntropy'> {
  return {
    softmax: (x) => softmax(rt, 'softmax', x),
    logSoftmax: (x) => softmax(rt, 'logSoftmax', x),
    softmaxCrossEntropy: (logits, targets, ignoreIndex) =>
      softmaxCrossEntropy(rt, logits, targets, ignoreIndex),
  };
}
