import {
  type MatmulSpec,
  type QuantType,
  quantFormat,
  quantizedShape,
  sizeOf,
  type TensorInfo,
} from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, rowStrategy, rowsTimesWeight } from './matvec';
import { outputSums } from './output-sums';
import { addendOf, type ProductAddend } from './product-addend';
import { makeProgram } from './program';
import { weightRowDot } from './weight-row';

const params = new ParamLayout().scalar('count', 'u32').scalar('n', 'u32').scalar('blocks', 'u32');

/**
 * out [rows, n] = x [rows, in] · Wᵀ for a block-quantized W [n, in] (scales and codes packed into words; see
 * QuantizedWeight), dequantizing each block inside the dot product. On a CPU rasteriser a thread per output walks
 * its row's blocks; on a GPU a workgroup per output takes them side by side (a block a thread per step), so a row's
 * threads read neighbouring blocks at once instead of one thread reading the whole row alone.
 */
export function quantizedMatmul(
  rt: GpuRuntime,
  x: TensorInfo,
  scales: TensorInfo,
  quants: TensorInfo,
  type: QuantType,
): GpuStorage {
  const [n, inner] = quantizedShape(type, scales.shape);
  const rows = sizeOf(x.shape) / inner;
  const out = rt.alloc(rows * n, 'f32');
  const weight = { scales: rt.storage(scales.id), quants: rt.storage(quants.id) };
  quantizedMatmulInto(rt, out, rt.storage(x.id), weight, type, rowsTimesWeight(rows, n, inner));
  return out;
}

/**
 * `quantizedMatmul` of x [spec.batch, spec.k] (`spec` as `rowsTimesWeight` gives it) written into `out`, plus `add`
 * where given (see `matvecInto`): a block's output projection and its residual in one dispatch.
 */
export function quantizedMatmulInto(
  rt: GpuRuntime,
  out: GpuStorage,
  x: GpuStorage,
  weight: { readonly scales: GpuStorage; readonly quants: GpuStorage },
  type: QuantType,
  spec: MatmulSpec,
  add?: ProductAddend,
): void {
  const values = quantFormat(type).values;
  const blocks = spec.k / values;
  const count = spec.batch * spec.n;
  const strategy = rowStrategy(rt);
  const { mode: addend, ...res } = addendOf(out, add);
  const row = {
    format: type,
    load: 1,
    data: 'quants',
    scales: 'scales',
    row: 'j',
    steps: 'p.blocks',
  } as const;
  const x4 = { width: 4, at: (i: string) => `x[xBase + ${i}]` } as const;
  const sums = outputSums(
    rt,
    strategy,
    count,
    blocks,
    (first, step) => `let xBase = r * p.blocks * ${values / 4}u;
  ${weightRowDot(row, x4, 'acc', first, step)}`,
    addend,
  );
  const program = makeProgram(
    `quantizedMatmul:${type}:${strategy}:${sums.wg}:${addend}`,
    [
      { name: 'x', type: 'vec4<f32>' },
      { name: 'scales', type: 'f32' },
      { name: 'quants', type: 'u32' },
      ...res.decls,
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    sums.code,
  );
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [x, weight.scales, weight.quants, ...res.storages],
    outputs: [out],
    params: params.pack({ count, n: spec.n, blocks }),
    workgroups: sums.workgroups,
  });
}
