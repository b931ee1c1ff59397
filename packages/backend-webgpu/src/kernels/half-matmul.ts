import { type HalfType, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, rowStrategy } from './matvec';
import { outputSums } from './output-sums';
import { makeProgram } from './program';

/** `words`: the packed words of a row, or its vec4 of words where the kernel loads four at a time. */
const params = new ParamLayout().scalar('count', 'u32').scalar('n', 'u32').scalar('words', 'u32');

/**
 * WGSL widening the packed word `w` to its two values (vec2<f32>, value 2j first): binary16 through the core
 * builtin unpack2x16float (no shader-f16 needed: the values are exact in f32 and the sums stay f32, as on the
 * CPU); bfloat16 as the top halves of two float32 bit patterns.
 */
function widen(type: HalfType, w: string): string {
  return type === 'f16'
    ? `unpack2x16float(${w})`
    : `vec2<f32>(bitcast<f32>(${w} << 16u), bitcast<f32>(${w} & 0xffff0000u))`;
}

/**
 * WGSL adding step t of row r's dot product with weight row j to `acc`: one word (two values, x bound as vec2) or,
 * `wide`, a vec4 of words (eight values, x bound as vec4).
 */
function stepCode(type: HalfType, wide: boolean): string {
  if (!wide) return `acc += dot(${widen(type, 'packed[j * p.words + t]')}, x[r * p.words + t]);`;
  const pair = (a: string, b: string) => `vec4<f32>(${widen(type, `w.${a}`)}, ${widen(type, `w.${b}`)})`;
  return `let w = packed[j * p.words + t];
    let xt = 2u * (r * p.words + t);
    acc += dot(${pair('x', 'y')}, x[xt]) + dot(${pair('z', 'w')}, x[xt + 1u]);`;
}

/**
 * out [rows, n] = x [rows, in] · Wᵀ for a 16-bit W [n, in] packed two values per word (see HalfWeight), widening
 * each word inside the dot product. On a CPU rasteriser a thread per output walks its row; on a GPU a workgroup per
 * output steps through the row side by side, a vec4 of words (16 bytes) per thread where the row allows, so the
 * weight streams coalesced as the f32 matrix-vector kernel's does.
 */
export function halfMatmul(rt: GpuRuntime, x: TensorInfo, packed: TensorInfo, type: HalfType): GpuStorage {
  const [n, words] = packed.shape;
  const rows = sizeOf(x.shape) / (words * 2);
  const count = rows * n;
  const out = rt.alloc(count, 'f32');
  const strategy = rowStrategy(rt);
  const wide = strategy !== 'thread' && words % 4 === 0;
  const steps = wide ? words / 4 : words;
  const sums = outputSums(
    rt,
    strategy,
    count,
    steps,
    (first, step) => `for (var t = ${first}; t < p.words; t += ${step}) {
    ${stepCode(type, wide)}
  }`,
  );
  const program = makeProgram(
    `halfMatmul:${type}:${strategy}${wide ? 4 : 1}:${sums.wg}`,
    [
      { name: 'x', type: wide ? 'vec4<f32>' : 'vec2<f32>' },
      { name: 'packed', type: wide ? 'vec4<u32>' : 'u32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    sums.code,
  );
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [rt.storage(x.id), rt.storage(packed.id)],
    outputs: [out],
    params: params.pack({ count, n, words: steps }),
    workgroups: sums.workgroups,
  });
  return out;
}
