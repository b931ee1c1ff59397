import { QUANT_BLOCK, type QuantType, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('n', 'u32').scalar('blocks', 'u32');

/**
 * WGSL adding one block's dot product into `s`: x's block is the eight vec4 at `xb`, the codes
 * the words at `qb`. Q8_0: each word holds four int8 codes, sign-extended by shifting them to the
 * top of an i32 and back. Q4_0: word t holds bytes 4t-4t+3, whose low nibbles are values 4t-4t+3
 * and high nibbles values 16+4t-16+4t+3, each minus 8.
 */
function blockCode(type: QuantType): string {
  if (type === 'q8_0') {
    return `for (var t = 0u; t < 8u; t++) {
      let w = bitcast<i32>(quants[qb + t]);
      let codes = vec4<i32>(w << 24u, w << 16u, w << 8u, w) >> vec4<u32>(24u);
      s += dot(vec4<f32>(codes), x[xb + t]);
    }`;
  }
  return `for (var t = 0u; t < 4u; t++) {
      let w = quants[qb + t];
      let lo = vec4<f32>((vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u)) & vec4<u32>(15u)) - 8.0;
      let hi = vec4<f32>((vec4<u32>(w >> 4u, w >> 12u, w >> 20u, w >> 28u)) & vec4<u32>(15u)) - 8.0;
      s += dot(lo, x[xb + t]) + dot(hi, x[xb + 4u + t]);
    }`;
}

/**
 * out [rows, n] = x [rows, in] · Wᵀ for a block-quantized W [n, in] (scales [n, blocks], codes
 * packed into words; see QuantizedWeight), dequantizing each block inside the dot product: one
 * thread per output, the block's sum scaled once.
 */
export function quantizedMatmul(
  rt: GpuRuntime,
  x: TensorInfo,
  scales: TensorInfo,
  quants: TensorInfo,
  type: QuantType,
): GpuStorage {
  const [n, blocks] = scales.shape;
  const rows = sizeOf(x.shape) / (blocks * QUANT_BLOCK);
  const count = rows * n;
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const words = type === 'q8_0' ? 8 : 4;
  const program = makeProgram(
    `quantizedMatmul:${type}:${wg}`,
    [
      { name: 'x', type: 'vec4<f32>' },
      { name: 'scales', type: 'f32' },
      { name: 'quants', type: 'u32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let r = o / p.n;
  let j = o % p.n;
  var acc = 0.0;
  for (var b = 0u; b < p.blocks; b++) {
    let xb = (r * p.blocks + b) * 8u;
    let qb = (j * p.blocks + b) * ${words}u;
    var s = 0.0;
    ${blockCode(type)}
    acc += s * scales[j * p.blocks + b];
  }
  out[o] = acc;
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id), rt.storage(scales.id), rt.storage(quants.id)],
    outputs: [out],
    params: params.pack({ count, n, blocks }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
