import {
  type CompactFormat,
  type FusedKernels,
  isQuantFormat,
  type QuantType,
  quantFormat,
  quantizedShape,
  sizeOf,
  type TensorInfo,
} from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { widen } from './weight-row';

/** `groups`: the groups of a row (values a thread decodes: 4 quantized, a word's 2 for halves). */
const params = new ParamLayout().scalar('count', 'u32').scalar('groups', 'u32').scalar('rows', 'u32');

/**
 * Rows of a compact table (block-quantized codes and scales, or 16-bit values packed two a word) picked by i32 ids,
 * decoded to f32 [...ids, dim] in one dispatch: a thread per group of a row's values, four of a quantized row (one
 * word of codes, vec4 in and out) or a 16-bit row's word of two, so a row's threads decode it side by side. Each
 * value is the f32 product of its exact code and scales, as the CPU's; out-of-range ids give rows of zeros.
 */
function weightRows(
  rt: GpuRuntime,
  ids: TensorInfo,
  data: TensorInfo,
  scales: TensorInfo,
  format: CompactFormat,
): GpuStorage {
  const [rows, words] = data.shape;
  const quantized = isQuantFormat(format);
  const dim = quantized ? quantizedShape(format, scales.shape)[1] : 2 * words;
  const width = quantized ? 4 : 2;
  const n = sizeOf(ids.shape);
  const groups = dim / width;
  const count = n * groups;
  const out = rt.alloc(n * dim, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `weightRows:${format}:${wg}`,
    [
      { name: 'ids', type: 'i32' },
      { name: 'data', type: 'u32' },
      ...(quantized ? [{ name: 'scales', type: 'f32' }] : []),
    ],
    [{ name: 'out', type: `vec${width}<f32>` }],
    params,
    () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let id = ids[o / p.groups];
  var v = vec${width}<f32>(0.0);
  if (id >= 0 && u32(id) < p.rows) {
    let at = u32(id) * p.groups + o % p.groups;
    ${quantized ? groupCode(format) : `v = ${widen(format, 'data[at]')};`}
  }
  out[o] = v;
}`,
  );
  const rowBytes = 4 * (words + (quantized ? scales.shape[1] : 0));
  rt.launch({
    program,
    inputs: [rt.storage(ids.id), rt.storage(data.id), ...(quantized ? [rt.storage(scales.id)] : [])],
    outputs: [out],
    params: params.pack({ count, groups, rows }),
    workgroups: Math.ceil(count / wg),
    // Each id reads its one row's words and scales (an out-of-range id none), not the whole table it binds.
    readBytes: 4 * n + n * rowBytes,
  });
  return out;
}

/**
 * WGSL setting `v` to values 4g..4g+3 of the table (g = `at`, a group of four within one block, from one word of
 * codes): block `at` / (values / 4), its codes the words from `qb`, its scales from `sb`, `e` the group in it.
 */
function groupCode(type: QuantType): string {
  const { values, words, scales } = quantFormat(type);
  const head = `let block = at / ${values / 4}u;
    let e = at % ${values / 4}u;
    let qb = block * ${words}u;
    let sb = block * ${scales}u;`;
  return `${head}
    ${blockGroup(type)}`;
}

/**
 * WGSL of group e of a block (see QuantizedWeight's layouts). Q8_0: word e's four int8 codes, sign-extended by
 * shifting each to the top of an i32 and back, times d. Q4_0: values 4e.. are the low nibbles of word e (e < 4) or
 * the high ones of word e − 4, minus 8, times d. Q4_K: sub-block e / 8, its nibbles (low for even sub-blocks, high
 * for odd) in word 4 + 8(sub / 2) + e mod 8, its 6-bit scale s in byte sub and min m in byte 8 + sub: d · s · q −
 * dmin · m. Q6_K: values 4e = 128h + 32k + 4t.. take their low nibbles from word 4 + 16h + 8(k mod 2) + t and high
 * pairs from bits 2k, 2k + 1 of word 36 + 8h + t, their int8 scale from byte e / 4: d · s · (q − 32).
 */
function blockGroup(type: QuantType): string {
  switch (type) {
    case 'q8_0':
      return `let word = bitcast<i32>(data[qb + e]);
    let codes = vec4<i32>(word << 24u, word << 16u, word << 8u, word) >> vec4<u32>(24u);
    v = scales[sb] * vec4<f32>(codes);`;
    case 'q4_0':
      return `let word = data[qb + (e & 3u)] >> (4u * (e >> 2u));
    let codes = vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u) & vec4<u32>(15u);
    v = scales[sb] * (vec4<f32>(codes) - 8.0);`;
    case 'q4_k':
      return `let sub = e >> 3u;
    let word = data[qb + 4u + 8u * (sub >> 1u) + (e & 7u)] >> (4u * (sub & 1u));
    let codes = vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u) & vec4<u32>(15u);
    let shift = 8u * (sub & 3u);
    let s = f32((data[qb + (sub >> 2u)] >> shift) & 63u);
    let m = f32((data[qb + 2u + (sub >> 2u)] >> shift) & 63u);
    v = (scales[sb] * s) * vec4<f32>(codes) - vec4<f32>(scales[sb + 1u] * m);`;
    case 'q6_k':
      return `let h = e >> 5u;
    let k = (e >> 3u) & 3u;
    let t = e & 7u;
    let lw = data[qb + 4u + 16u * h + 8u * (k & 1u) + t] >> (4u * (k >> 1u));
    let hw = data[qb + 36u + 8u * h + t] >> (2u * k);
    let lo = vec4<u32>(lw, lw >> 8u, lw >> 16u, lw >> 24u) & vec4<u32>(15u);
    let hi = (vec4<u32>(hw, hw >> 8u, hw >> 16u, hw >> 24u) & vec4<u32>(3u)) << vec4<u32>(4u);
    let shift = 8u * ((e >> 2u) & 3u);
    let s = f32(bitcast<i32>(data[qb + (e >> 4u)] << (24u - shift)) >> 24u);
    v = (scales[sb] * s) * (vec4<f32>(lo | hi) - 32.0);`;
  }
}

/** The compact weight's row lookup (`weightRows` above). */
export function weightRowsKernels(rt: GpuRuntime): Pick<FusedKernels, 'weightRows'> {
  return { weightRows: (ids, data, scales, format) => weightRows(rt, ids, data, scales, format) };
}
