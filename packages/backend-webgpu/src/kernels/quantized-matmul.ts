import { type QuantType, quantFormat, quantizedShape, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, rowStrategy } from './matvec';
import { outputSums } from './output-sums';
import { makeProgram } from './program';

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
 * WGSL adding the blocks `blocks` (a loop header over b) of output (r, j) to acc: blocks of 32 with one scale (Q8_0, Q4_0; `p.blocks` of them per row), each block's
 * dot product scaled once; or Q4_K super-blocks of 256 (`p.blocks` per row, 36 words and d, dmin each): words 0-3
 * hold the 6-bit scales (bytes 0-7) and mins (bytes 8-15), words 4-35 the nibbles, word 4 + 8c + t holding values
 * 64c + 4t.. in its low nibbles and 64c + 32 + 4t.. in its high ones; each sub-block's dot product is scaled by
 * d · s, and its sum of x by dmin · m; or Q6_K super-blocks (see q6kCode).
 */
function outputCode(type: QuantType, blocks: string): string {
  if (type === 'q6_k') return q6kCode(blocks);
  if (type !== 'q4_k') {
    const words = type === 'q8_0' ? 8 : 4;
    return `${blocks} {
    let xb = (r * p.blocks + b) * 8u;
    let qb = (j * p.blocks + b) * ${words}u;
    var s = 0.0;
    ${blockCode(type)}
    acc += s * scales[j * p.blocks + b];
  }`;
  }
  return `${blocks} {
    let xb = (r * p.blocks + b) * 64u;
    let qb = (j * p.blocks + b) * 36u;
    let d = scales[2u * (j * p.blocks + b)];
    let dmin = scales[2u * (j * p.blocks + b) + 1u];
    for (var c = 0u; c < 4u; c++) {
      var slo = 0.0;
      var shi = 0.0;
      var xlo = 0.0;
      var xhi = 0.0;
      for (var t = 0u; t < 8u; t++) {
        let w = quants[qb + 4u + 8u * c + t];
        let lo = vec4<f32>(vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) & vec4<u32>(15u));
        let hi = vec4<f32>(vec4<u32>(w >> 4u, w >> 12u, w >> 20u, w >> 28u) & vec4<u32>(15u));
        let a = x[xb + 16u * c + t];
        let e = x[xb + 16u * c + 8u + t];
        slo += dot(lo, a);
        shi += dot(hi, e);
        xlo += dot(a, vec4<f32>(1.0));
        xhi += dot(e, vec4<f32>(1.0));
      }
      let sub = 2u * c;
      let shift = 8u * (sub & 3u);
      let sw = quants[qb + (sub >> 2u)];
      let mw = quants[qb + 2u + (sub >> 2u)];
      let slo6 = f32((sw >> shift) & 63u);
      let shi6 = f32((sw >> (shift + 8u)) & 63u);
      let mlo6 = f32((mw >> shift) & 63u);
      let mhi6 = f32((mw >> (shift + 8u)) & 63u);
      acc += d * (slo6 * slo + shi6 * shi) - dmin * (mlo6 * xlo + mhi6 * xhi);
    }
  }`;
}

/**
 * WGSL adding the Q6_K super-blocks `blocks` (a loop header over b; `p.blocks` of 256 per row, 52 words and d each): words 0-3 hold the
 * int8 sub-block scales, words 4-35 the low nibbles and words 36-51 the high bit pairs. Values 128h + 32k + 4t..+3
 * (h < 2, k < 4, t < 8) take their nibbles from word 4 + 16h + 8(k & 1) + t (low halves for k < 2, high else) and
 * their high pairs from bits 2k, 2k + 1 of each byte of word 36 + 8h + t; t < 4 is sub-block 8h + 2k, the rest the
 * next. Each sub-block's dot product of codes minus 32 is scaled by d · s.
 */
function q6kCode(blocks: string): string {
  return `${blocks} {
    let xb = (r * p.blocks + b) * 64u;
    let qb = (j * p.blocks + b) * 52u;
    let d = scales[j * p.blocks + b];
    for (var h = 0u; h < 2u; h++) {
      for (var k = 0u; k < 4u; k++) {
        var s0 = 0.0;
        var s1 = 0.0;
        for (var t = 0u; t < 8u; t++) {
          let lw = quants[qb + 4u + 16u * h + 8u * (k & 1u) + t] >> (4u * (k >> 1u));
          let hw = quants[qb + 36u + 8u * h + t] >> (2u * k);
          let lo = vec4<u32>(lw, lw >> 8u, lw >> 16u, lw >> 24u) & vec4<u32>(15u);
          let hi = (vec4<u32>(hw, hw >> 8u, hw >> 16u, hw >> 24u) & vec4<u32>(3u)) << vec4<u32>(4u);
          let q = vec4<f32>(vec4<i32>(lo | hi) - vec4<i32>(32));
          let part = dot(q, x[xb + 32u * h + 8u * k + t]);
          if (t < 4u) {
            s0 += part;
          } else {
            s1 += part;
          }
        }
        let sub = 8u * h + 2u * k;
        let sw = quants[qb + (sub >> 2u)];
        let at = 8u * (sub & 3u);
        let sc0 = f32(bitcast<i32>(sw << (24u - at)) >> 24u);
        let sc1 = f32(bitcast<i32>(sw << (16u - at)) >> 24u);
        acc += d * (sc0 * s0 + sc1 * s1);
      }
    }
  }`;
}

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
  const blocks = inner / quantFormat(type).values;
  const rows = sizeOf(x.shape) / inner;
  const count = rows * n;
  const out = rt.alloc(count, 'f32');
  const strategy = rowStrategy(rt);
  const sums = outputSums(rt, strategy, count, blocks, (first, step) =>
    outputCode(type, `for (var b = ${first}; b < p.blocks; b += ${step})`),
  );
  const program = makeProgram(
    `quantizedMatmul:${type}:${strategy}:${sums.wg}`,
    [
      { name: 'x', type: 'vec4<f32>' },
      { name: 'scales', type: 'f32' },
      { name: 'quants', type: 'u32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    sums.code,
  );
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [rt.storage(x.id), rt.storage(scales.id), rt.storage(quants.id)],
    outputs: [out],
    params: params.pack({ count, n, blocks }),
    workgroups: sums.workgroups,
  });
  return out;
}
