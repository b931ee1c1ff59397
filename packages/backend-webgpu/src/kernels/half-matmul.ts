import { type HalfType, type MatmulSpec, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, rowStrategy, rowsTimesWeight } from './matvec';
import { outputSums } from './output-sums';
import { addendOf, type ProductAddend } from './product-addend';
import { makeProgram } from './program';
import { type RowVector, weightRowDot } from './weight-row';

/** `words`: the packed words of a row, or its vec4s of words where the kernel loads four at a time. */
const params = new ParamLayout().scalar('count', 'u32').scalar('n', 'u32').scalar('words', 'u32');

/**
 * out [rows, n] = x [rows, in] · Wᵀ for a 16-bit W [n, in] packed two values per word (see HalfWeight), widening
 * each word inside the dot product. On a CPU rasteriser a thread per output walks its row; on a GPU a workgroup per
 * output steps through the row side by side, a vec4 of words (16 bytes) per thread where the row allows, so the
 * weight streams coalesced as the f32 matrix-vector kernel's does.
 */
export function halfMatmul(rt: GpuRuntime, x: TensorInfo, packed: TensorInfo, type: HalfType): GpuStorage {
  const [n, words] = packed.shape;
  const rows = sizeOf(x.shape) / (words * 2);
  const out = rt.alloc(rows * n, 'f32');
  halfMatmulInto(rt, out, rt.storage(x.id), rt.storage(packed.id), type, rowsTimesWeight(rows, n, 2 * words));
  return out;
}

/**
 * `halfMatmul` of x [spec.batch, spec.k] (`spec` as `rowsTimesWeight` gives it) written into `out`, plus `add`
 * where given (see `matvecInto`): a block's output projection and its residual in one dispatch.
 */
export function halfMatmulInto(
  rt: GpuRuntime,
  out: GpuStorage,
  x: GpuStorage,
  packed: GpuStorage,
  type: HalfType,
  spec: MatmulSpec,
  add?: ProductAddend,
): void {
  const words = spec.k / 2;
  const count = spec.batch * spec.n;
  const strategy = rowStrategy(rt);
  const wide = strategy !== 'thread' && words % 4 === 0;
  const steps = wide ? words / 4 : words;
  const { mode: addend, ...res } = addendOf(out, add);
  const row = { format: type, load: wide ? 4 : 1, data: 'packed', row: 'j', steps: 'p.words' } as const;
  const xs: RowVector = { width: wide ? 4 : 2, at: (i) => `x[xBase + ${i}]` };
  const sums = outputSums(
    rt,
    strategy,
    count,
    steps,
    (first, step) => `let xBase = r * p.words${wide ? ' * 2u' : ''};
  ${weightRowDot(row, xs, 'acc', first, step)}`,
    addend,
  );
  const program = makeProgram(
    `halfMatmul:${type}:${strategy}${wide ? 4 : 1}:${sums.wg}:${addend}`,
    [
      { name: 'x', type: wide ? 'vec4<f32>' : 'vec2<f32>' },
      { name: 'packed', type: wide ? 'vec4<u32>' : 'u32' },
      ...res.decls,
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    sums.code,
  );
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [x, packed, ...res.storages],
    outputs: [out],
    params: params.pack({ count, n: spec.n, words: steps }),
    workgroups: sums.workgroups,
  });
}
