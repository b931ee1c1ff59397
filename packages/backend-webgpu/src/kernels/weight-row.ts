import { type HalfType, isQuantFormat, type QuantType, quantFormat, type WeightFormat } from '@loom/tensor';

/**
 * The vector a weight row is dotted with, as WGSL: `at(i)` is its load i from the row's start, `width` values
 * (an f32, vec2<f32> or vec4<f32>: values width·i onward). A product reads it from x as bound; `normedPairs`
 * forms the normed row as it reads x. `at` may not use the names `weightRowDot` declares.
 */
export interface RowVector {
  readonly width: 1 | 2 | 4;
  at(i: string): string;
}

/** Where a kernel reads a weight row of `format` stored [out, in]. */
export interface WeightRow {
  readonly format: WeightFormat;
  /**
   * What a load of `data` holds (see `dataType`): f32, values (1 or 4, the vector's width); 16-bit, words (1, 2 or
   * 4; 1 beside a vector of width 1 or 2, else 2 or 4 beside vec4s); quantized, 1 (one word of codes).
   */
  readonly load: 1 | 2 | 4;
  /** The bindings of its data (f32 values, 16-bit words or codes) and, quantized, of its scales. */
  readonly data: string;
  readonly scales?: string;
  /** WGSL of the row's index, and of its steps (its length over `stepValues`). */
  readonly row: string;
  readonly steps: string;
}

/** Values of a row one step of `weightRowDot` takes: a load (f32), two a word (16-bit), a block (quantized). */
export function stepValues(format: WeightFormat, load: 1 | 2 | 4): number {
  if (isQuantFormat(format)) return quantFormat(format).values;
  return format === 'f32' ? load : 2 * load;
}

/** The WGSL element type a row's data is bound as. */
export function dataType(format: WeightFormat, load: 1 | 2 | 4): string {
  if (isQuantFormat(format)) return 'u32';
  const scalar = format === 'f32' ? 'f32' : 'u32';
  return load === 1 ? scalar : `vec${load}<${scalar}>`;
}

/** WGSL of one f32 term: a vec4 `dot` or a scalar product. */
export function term(width: 1 | 4, a: string, b: string): string {
  return width === 4 ? `dot(${a}, ${b})` : `${a} * ${b}`;
}

/**
 * WGSL adding the dot product of weight row `w.row` with `x` to `acc` (an f32 reference), over the row's steps from
 * `first` by `step` (all of them, or a thread's share of a workgroup's): a compound statement declaring `steps`, the
 * step `b`, its index `wi` in the data and the locals of the format's decoding. Weights are read packed and
 * widened exactly inside the product, so the sums are f32 as the CPU's.
 */
export function weightRowDot(w: WeightRow, x: RowVector, acc: string, first: string, step: string): string {
  return `{
    let steps = ${w.steps};
    for (var b = ${first}; b < steps; b += ${step}) {
      let wi = ${w.row} * steps + b;
      ${stepCode(w, x, acc)}
    }
  }`;
}

/** WGSL adding step b of the row (its data at `wi`) to `acc`. */
function stepCode(w: WeightRow, x: RowVector, acc: string): string {
  if (w.format === 'f32') {
    if (x.width !== w.load || x.width === 2)
      throw new Error(`weightRowDot: f32 by ${w.load} beside ${x.width}`);
    return `${acc} += ${term(x.width, x.at('b'), `${w.data}[wi]`)};`;
  }
  if (!isQuantFormat(w.format)) return halfCode(w.format, w, x, acc);
  if (x.width !== 4 || w.scales === undefined)
    throw new Error(`weightRowDot: ${w.format} needs vec4s and scales`);
  const { values, words } = quantFormat(w.format);
  return `let xb = b * ${values / 4}u;
      let qb = wi * ${words}u;
      ${quantCode(w.format, w.data, w.scales, x.at, acc)}`;
}

/**
 * WGSL widening the packed word `word` to its two values (vec2<f32>, value 2j first): binary16 through the core
 * builtin unpack2x16float (no shader-f16 needed: the values are exact in f32 and the sums stay f32, as on the
 * CPU); bfloat16 as the top halves of two float32 bit patterns.
 */
export function widen(type: HalfType, word: string): string {
  return type === 'f16'
    ? `unpack2x16float(${word})`
    : `vec2<f32>(bitcast<f32>(${word} << 16u), bitcast<f32>(${word} & 0xffff0000u))`;
}

/**
 * A step of a 16-bit row: one word (two values, against a vec2 of x, or two scalars), two words (against a vec4)
 * or four (against two vec4s, 16 bytes of weight a load).
 */
function halfCode(type: HalfType, w: WeightRow, x: RowVector, acc: string): string {
  const word = `${w.data}[wi]`;
  if (w.load === 1) {
    if (x.width === 4) throw new Error('weightRowDot: 16-bit words one by one beside vec4s');
    const pair = x.width === 2 ? x.at('b') : `vec2<f32>(${x.at('2u * b')}, ${x.at('2u * b + 1u')})`;
    return `${acc} += dot(${widen(type, word)}, ${pair});`;
  }
  if (x.width !== 4) throw new Error(`weightRowDot: 16-bit words ${w.load} a load beside ${x.width}`);
  const four = (a: string, c: string) =>
    `vec4<f32>(${widen(type, `pack.${a}`)}, ${widen(type, `pack.${c}`)})`;
  if (w.load === 2) return `let pack = ${word};\n      ${acc} += dot(${four('x', 'y')}, ${x.at('b')});`;
  return `let pack = ${word};
      ${acc} += dot(${four('x', 'y')}, ${x.at('2u * b')}) + dot(${four('z', 'w')}, ${x.at('2u * b + 1u')});`;
}

/**
 * A block of a quantized row, its codes the words from `qb` and x's values the vec4s from `xb` (`at`): blocks of
 * 32 with one scale (Q8_0, Q4_0), the block's dot product scaled once; Q4_K and Q6_K super-blocks of 256.
 */
function quantCode(
  type: QuantType,
  quants: string,
  scales: string,
  at: (i: string) => string,
  acc: string,
): string {
  if (type === 'q4_k') return q4kCode(quants, scales, at, acc);
  if (type === 'q6_k') return q6kCode(quants, scales, at, acc);
  return `var s = 0.0;
      ${blockCode(type, quants, at)}
      ${acc} += s * ${scales}[wi];`;
}

/**
 * WGSL adding one block's dot product into `s`. Q8_0: each word holds four int8 codes, sign-extended by shifting
 * them to the top of an i32 and back. Q4_0: word t holds bytes 4t-4t+3, whose low nibbles are values 4t-4t+3 and
 * high nibbles values 16+4t-16+4t+3, each minus 8.
 */
function blockCode(type: 'q8_0' | 'q4_0', quants: string, at: (i: string) => string): string {
  if (type === 'q8_0') {
    return `for (var t = 0u; t < 8u; t++) {
        let word = bitcast<i32>(${quants}[qb + t]);
        let codes = vec4<i32>(word << 24u, word << 16u, word << 8u, word) >> vec4<u32>(24u);
        s += dot(vec4<f32>(codes), ${at('xb + t')});
      }`;
  }
  return `for (var t = 0u; t < 4u; t++) {
        let word = ${quants}[qb + t];
        let lo = vec4<f32>((vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u)) & vec4<u32>(15u)) - 8.0;
        let hi = vec4<f32>((vec4<u32>(word >> 4u, word >> 12u, word >> 20u, word >> 28u)) & vec4<u32>(15u)) - 8.0;
        s += dot(lo, ${at('xb + t')}) + dot(hi, ${at('xb + 4u + t')});
      }`;
}

/**
 * A Q4_K super-block (36 words, d and dmin): words 0-3 hold the 6-bit scales (bytes 0-7) and mins (bytes 8-15),
 * words 4-35 the nibbles, word 4 + 8c + t holding values 64c + 4t.. in its low nibbles and 64c + 32 + 4t.. in its
 * high ones; each sub-block's dot product is scaled by d · s, and its sum of x by dmin · m.
 */
function q4kCode(quants: string, scales: string, at: (i: string) => string, acc: string): string {
  return `let d = ${scales}[2u * wi];
      let dmin = ${scales}[2u * wi + 1u];
      for (var c = 0u; c < 4u; c++) {
        var slo = 0.0;
        var shi = 0.0;
        var xlo = 0.0;
        var xhi = 0.0;
        for (var t = 0u; t < 8u; t++) {
          let word = ${quants}[qb + 4u + 8u * c + t];
          let lo = vec4<f32>(vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u) & vec4<u32>(15u));
          let hi = vec4<f32>(vec4<u32>(word >> 4u, word >> 12u, word >> 20u, word >> 28u) & vec4<u32>(15u));
          let va = ${at('xb + 16u * c + t')};
          let vb = ${at('xb + 16u * c + 8u + t')};
          slo += dot(lo, va);
          shi += dot(hi, vb);
          xlo += dot(va, vec4<f32>(1.0));
          xhi += dot(vb, vec4<f32>(1.0));
        }
        let sub = 2u * c;
        let shift = 8u * (sub & 3u);
        let sw = ${quants}[qb + (sub >> 2u)];
        let mw = ${quants}[qb + 2u + (sub >> 2u)];
        let slo6 = f32((sw >> shift) & 63u);
        let shi6 = f32((sw >> (shift + 8u)) & 63u);
        let mlo6 = f32((mw >> shift) & 63u);
        let mhi6 = f32((mw >> (shift + 8u)) & 63u);
        ${acc} += d * (slo6 * slo + shi6 * shi) - dmin * (mlo6 * xlo + mhi6 * xhi);
      }`;
}

/**
 * A Q6_K super-block (52 words, d): words 0-3 hold the int8 sub-block scales, words 4-35 the low nibbles and words
 * 36-51 the high bit pairs. Values 128h + 32k + 4t..+3 (h < 2, k < 4, t < 8) take their nibbles from word
 * 4 + 16h + 8(k & 1) + t (low halves for k < 2, high else) and their high pairs from bits 2k, 2k + 1 of each byte
 * of word 36 + 8h + t; t < 4 is sub-block 8h + 2k, the rest the next. Each sub-block's dot product of codes minus
 * 32 is scaled by d · s.
 */
function q6kCode(quants: string, scales: string, at: (i: string) => string, acc: string): string {
  return `let d = ${scales}[wi];
      for (var h = 0u; h < 2u; h++) {
        for (var k = 0u; k < 4u; k++) {
          var s0 = 0.0;
          var s1 = 0.0;
          for (var t = 0u; t < 8u; t++) {
            let lw = ${quants}[qb + 4u + 16u * h + 8u * (k & 1u) + t] >> (4u * (k >> 1u));
            let hw = ${quants}[qb + 36u + 8u * h + t] >> (2u * k);
            let lo = vec4<u32>(lw, lw >> 8u, lw >> 16u, lw >> 24u) & vec4<u32>(15u);
            let hi = (vec4<u32>(hw, hw >> 8u, hw >> 16u, hw >> 24u) & vec4<u32>(3u)) << vec4<u32>(4u);
            let codes = vec4<f32>(vec4<i32>(lo | hi) - vec4<i32>(32));
            let part = dot(codes, ${at('xb + 32u * h + 8u * k + t')});
            if (t < 4u) {
              s0 += part;
            } else {
              s1 += part;
            }
          }
          let sub = 8u * h + 2u * k;
          let sw = ${quants}[qb + (sub >> 2u)];
          let shift = 8u * (sub & 3u);
          let sc0 = f32(bitcast<i32>(sw << (24u - shift)) >> 24u);
          let sc1 = f32(bitcast<i32>(sw << (16u - shift)) >> 24u);
          ${acc} += d * (sc0 * s0 + sc1 * s1);
        }
      }`;
}
