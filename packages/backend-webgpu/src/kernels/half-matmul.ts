import { type HalfType, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('n', 'u32').scalar('words', 'u32');

/**
 * WGSL widening one packed word `w` to its two values (vec2<f32>, value 2j first): binary16 through the core
 * builtin unpack2x16float (no shader-f16 needed); bfloat16 as the top halves of two float32 bit patterns.
 */
function widen(type: HalfType): string {
  return type === 'f16'
    ? 'unpack2x16float(w)'
    : 'vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u))';
}

/**
 * out [rows, n] = x [rows, in] · Wᵀ for a 16-bit W [n, in] packed two values per word (see HalfWeight), widening
 * each word inside the dot product: one thread per output.
 */
export function halfMatmul(rt: GpuRuntime, x: TensorInfo, packed: TensorInfo, type: HalfType): GpuStorage {
  const [n, words] = packed.shape;
  const rows = sizeOf(x.shape) / (words * 2);
  const count = rows * n;
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `halfMatmul:${type}:${wg}`,
    [
      { name: 'x', type: 'vec2<f32>' },
      { name: 'packed', type: 'u32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let r = o / p.n;
  let j = o % p.n;
  var acc = 0.0;
  for (var t = 0u; t < p.words; t++) {
    let w = packed[j * p.words + t];
    acc += dot(${widen(type)}, x[r * p.words + t]);
  }
  out[o] = acc;
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id), rt.storage(packed.id)],
    outputs: [out],
    params: params.pack({ count, n, words }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
