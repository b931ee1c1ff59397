import { f16ToF32, f32ToF16Bits } from '../half';

/**
 * ggml's K-quants Q4_K and Q6_K: super-blocks of 256 values with sub-block scales. Quantization follows llama.cpp's
 * reference quantizer (the one `llama-quantize` runs without an importance matrix) step for step in float32
 * arithmetic, so both write the same bytes; `test/k-quants.test.ts` checks that against llama.cpp's own library.
 *
 * Q4_K block (144 bytes): d f16, dmin f16, 12 bytes of eight 6-bit scales and eight 6-bit mins, 128 bytes of 4-bit
 * levels; sub-block j (32 values) is x = d·scale_j·q − dmin·min_j.
 * Q6_K block (210 bytes): 128 bytes of low 4 bits, 64 bytes of high 2 bits, sixteen int8 scales, d f16; sub-block j
 * (16 values) is x = d·scale_j·(q − 32).
 */

/** Elements per K-quant super-block. */
export const K_BLOCK = 256;
export const Q4_K_BYTES = 144;
export const Q6_K_BYTES = 210;

const f = Math.fround;
/** Smallest block magnitude quantized as other than all zero (ggml's GROUP_MAX_EPS). */
const GROUP_MAX_EPS = f(1e-15);
const ONE_TENTH = f(0.1);

/** Round half to even of a float32, as ggml's nearest_int (the 1.5·2^23 trick). */
function nearestInt(x: number): number {
  return f(x + 12582912) - 12582912;
}

function half(bytes: Uint8Array, at: number): number {
  return f16ToF32(Uint16Array.of(bytes[at] | (bytes[at + 1] << 8)))[0];
}

function writeHalf(out: Uint8Array, at: number, value: number): number {
  const bits = f32ToF16Bits(value);
  out[at] = bits & 0xff;
  out[at + 1] = bits >> 8;
  return half(out, at);
}

/** Sub-block j's 6-bit scale and min from a Q4_K block's 12 packed bytes (which start at `at`). */
function scaleMin(bytes: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [bytes[at + j] & 63, bytes[at + j + 4] & 63];
  return [
    (bytes[at + j + 4] & 0xf) | ((bytes[at + j - 4] >> 6) << 4),
    (bytes[at + j + 4] >> 4) | ((bytes[at + j] >> 6) << 4),
  ];
}

/**
 * The eight 6-bit scales then the eight 6-bit mins of a Q4_K block's 12 packed bytes (at `at`) as one byte each, into
 * `out` at `to`: the unpacked form Loom's in-memory Q4_K weights hold (see QuantizedWeight).
 */
export function unpackScaleMins(bytes: Uint8Array, at: number, out: Uint8Array, to: number): void {
  for (let j = 0; j < 8; j++) {
    const [scale, min] = scaleMin(bytes, at, j);
    out[to + j] = scale;
    out[to + 8 + j] = min;
  }
}

/**
 * Levels 0..nmax and a scale and (non-positive) offset for n values, minimising the weighted squared error over a
 * sweep of trial scales (ggml's make_qkx2_quants with use_mad off). Writes the levels to `levels` at `at`.
 */
function fitScaleMin(
  x: Float32Array,
  weights: Float32Array,
  levels: Uint8Array,
  at: number,
  nmax: number,
  rmin: number,
  rdelta: number,
  nstep: number,
): { scale: number; min: number } {
  const n = weights.length;
  let min = x[0];
  let max = x[0];
  let sumW = weights[0];
  let sumX = f(sumW * x[0]);
  for (let i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sumW = f(sumW + weights[i]);
    sumX = f(sumX + f(weights[i] * x[i]));
  }
  if (min > 0) min = 0;
  if (max === min) {
    levels.fill(0, at, at + n);
    return { scale: 0, min: -min };
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[i] - min)))));
    levels[at + i] = l;
    const diff = f(f(f(scale * l) + min) - x[i]);
    bestError = f(bestError + f(weights[i] * f(diff * diff)));
  }
  const trial = new Uint8Array(n);
  for (let step = 0; step <= nstep; step++) {
    // The offset moves to the best fit so far, and the trial range with it.
    iscale = f(f(f(rmin + f(rdelta * step)) + nmax) / f(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[i] - min)))));
      trial[i] = l;
      const wl = f(weights[i] * l);
      sumL = f(sumL + wl);
      sumL2 = f(sumL2 + f(wl * l));
      sumXL = f(sumXL + f(wl * x[i]));
    }
    const det = f(f(sumW * sumL2) - f(sumL * sumL));
    if (!(det > 0)) continue;
    let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / det);
    let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / det);
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = f(sumXL / sumL2);
    }
    let error = 0;
    for (let i = 0; i < n; i++) {
      const diff = f(f(f(thisScale * trial[i]) + thisMin) - x[i]);
      error = f(error + f(weights[i] * f(diff * diff)));
    }
    if (error < bestError) {
      levels.set(trial, at);
      bestError = error;
      scale = thisScale;
      min = thisMin;
    }
  }
  return { scale, min: -min };
}

/** The Q4_K blocks of `values` (a multiple of 256 long). */
export function quantizeQ4K(values: Float32Array): Uint8Array {
  const blocks = values.length / K_BLOCK;
  const out = new Uint8Array(blocks * Q4_K_BYTES);
  const levels = new Uint8Array(K_BLOCK);
  const weights = new Float32Array(32);
  const scales = new Float32Array(8);
  const mins = new Float32Array(8);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * K_BLOCK, (b + 1) * K_BLOCK);
    const base = b * Q4_K_BYTES;
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 8; j++) {
      const sub = x.subarray(32 * j, 32 * j + 32);
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(sub[l] * sub[l]));
      const average = f(Math.sqrt(f(sumX2 / 32)));
      for (let l = 0; l < 32; l++) weights[l] = f(average + Math.abs(sub[l]));
      const fit = fitScaleMin(sub, weights, levels, 32 * j, 15, -1, ONE_TENTH, 20);
      scales[j] = fit.scale;
      mins[j] = fit.min;
      if (scales[j] > maxScale) maxScale = scales[j];
      if (mins[j] > maxMin) maxMin = mins[j];
    }
    const inverseScale = maxScale > 0 ? f(63 / maxScale) : 0;
    const inverseMin = maxMin > 0 ? f(63 / maxMin) : 0;
    const packed = base + 4;
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, nearestInt(f(inverseScale * scales[j])) & 0xff);
      const lm = Math.min(63, nearestInt(f(inverseMin * mins[j])) & 0xff);
      if (j < 4) {
        out[packed + j] = ls;
        out[packed + j + 4] = lm;
      } else {
        out[packed + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        out[packed + j - 4] |= (ls >> 4) << 6;
        out[packed + j] |= (lm >> 4) << 6;
      }
    }
    const d = writeHalf(out, base, f(maxScale / 63));
    const dmin = writeHalf(out, base + 2, f(maxMin / 63));
    for (let j = 0; j < 8; j++) {
      const [sc, m] = scaleMin(out, packed, j);
      const scale = f(d * sc);
      if (scale === 0) continue;
      const offset = f(dmin * m);
      for (let i = 0; i < 32; i++) {
        const l = nearestInt(f(f(x[32 * j + i] + offset) / scale));
        levels[32 * j + i] = Math.max(0, Math.min(15, l));
      }
    }
    const qs = base + 16;
    for (let chunk = 0; chunk < 4; chunk++) {
      for (let l = 0; l < 32; l++) {
        out[qs + 32 * chunk + l] = levels[64 * chunk + l] | (levels[64 * chunk + 32 + l] << 4);
      }
    }
  }
  return out;
}

/** Float32 values of `count` elements (a multiple of 256) stored as Q4_K blocks in `bytes`. */
export function dequantizeQ4K(bytes: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count);
  for (let b = 0; b < count / K_BLOCK; b++) {
    const base = b * Q4_K_BYTES;
    const d = half(bytes, base);
    const dmin = half(bytes, base + 2);
    for (let chunk = 0; chunk < 4; chunk++) {
      const q = base + 16 + 32 * chunk;
      const [sc1, m1] = scaleMin(bytes, base + 4, 2 * chunk);
      const [sc2, m2] = scaleMin(bytes, base + 4, 2 * chunk + 1);
      const scale1 = f(d * sc1);
      const offset1 = f(dmin * m1);
      const scale2 = f(d * sc2);
      const offset2 = f(dmin * m2);
      const y = b * K_BLOCK + 64 * chunk;
      for (let l = 0; l < 32; l++) {
        out[y + l] = f(scale1 * (bytes[q + l] & 0xf)) - offset1;
        out[y + 32 + l] = f(scale2 * (bytes[q + l] >> 4)) - offset2;
      }
    }
  }
  return out;
}

/** The weight of value v in Q6_K's scale search (ggml's rmse_type 1: v²). */
const squareWeight = (v: number) => f(v * v);

/** Sums Σw·x·l and Σw·l² of levels l = clamp(round(iscale·x)) in −nmax..nmax−1, as float32. */
function levelSums(x: Float32Array, iscale: number, nmax: number): [number, number] {
  let sumLX = 0;
  let sumL2 = 0;
  for (let i = 0; i < x.length; i++) {
    const l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * x[i]))));
    const w = squareWeight(x[i]);
    sumLX = f(sumLX + f(f(w * x[i]) * l));
    sumL2 = f(sumL2 + f(f(w * l) * l));
  }
  return [sumLX, sumL2];
}

/**
 * Signed levels −nmax..nmax−1 (stored + nmax in `levels` at `at`) and a scale for a sub-block, the best of 19
 * trial scales by weighted error (ggml's make_qx_quants with rmse_type 1).
 */
function fitSymmetric(x: Float32Array, levels: Uint8Array, at: number, nmax: number): number {
  let max = 0;
  let amax = 0;
  for (let i = 0; i < x.length; i++) {
    const ax = Math.abs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < GROUP_MAX_EPS) {
    levels.fill(0, at, at + x.length);
    return 0;
  }
  const store = (iscale: number) => {
    for (let i = 0; i < x.length; i++) {
      levels[at + i] = nmax + Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * x[i]))));
    }
  };
  let iscale = f(-nmax / max);
  store(iscale);
  let [sumLX, sumL2] = levelSums(x, iscale, nmax);
  let scale = sumL2 !== 0 ? f(sumLX / sumL2) : 0;
  let best = f(scale * sumLX);
  for (let step = -9; step <= 9; step++) {
    if (step === 0) continue;
    iscale = f(-f(nmax + f(ONE_TENTH * step)) / max);
    [sumLX, sumL2] = levelSums(x, iscale, nmax);
    if (sumL2 > 0 && f(sumLX * sumLX) > f(best * sumL2)) {
      store(iscale);
      scale = f(sumLX / sumL2);
      best = f(scale * sumLX);
    }
  }
  return scale;
}

/** The Q6_K blocks of `values` (a multiple of 256 long). */
export function quantizeQ6K(values: Float32Array): Uint8Array {
  const blocks = values.length / K_BLOCK;
  const out = new Uint8Array(blocks * Q6_K_BYTES);
  const levels = new Uint8Array(K_BLOCK);
  const scales = new Float32Array(16);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * K_BLOCK, (b + 1) * K_BLOCK);
    const base = b * Q6_K_BYTES;
    let maxScale = 0;
    let maxAbsScale = 0;
    for (let j = 0; j < 16; j++) {
      scales[j] = fitSymmetric(x.subarray(16 * j, 16 * j + 16), levels, 16 * j, 32);
      if (Math.abs(scales[j]) > maxAbsScale) {
        maxAbsScale = Math.abs(scales[j]);
        maxScale = scales[j];
      }
    }
    if (maxAbsScale < GROUP_MAX_EPS) continue; // all zero: d = 0 and zero levels
    const iscale = f(-128 / maxScale);
    const d = writeHalf(out, base + 208, f(1 / iscale));
    const stored = new Int8Array(out.buffer, base + 192, 16);
    for (let j = 0; j < 16; j++) stored[j] = Math.min(127, nearestInt(f(iscale * scales[j])));
    for (let j = 0; j < 16; j++) {
      const scale = f(d * stored[j]);
      if (scale === 0) continue;
      for (let i = 0; i < 16; i++) {
        const l = Math.max(-32, Math.min(31, nearestInt(f(x[16 * j + i] / scale))));
        levels[16 * j + i] = l + 32;
      }
    }
    for (let chunk = 0; chunk < 2; chunk++) {
      const ql = base + 64 * chunk;
      const qh = base + 128 + 32 * chunk;
      const L = (k: number) => levels[128 * chunk + k];
      for (let l = 0; l < 32; l++) {
        out[ql + l] = (L(l) & 0xf) | ((L(l + 64) & 0xf) << 4);
        out[ql + l + 32] = (L(l + 32) & 0xf) | ((L(l + 96) & 0xf) << 4);
        out[qh + l] =
          (L(l) >> 4) | ((L(l + 32) >> 4) << 2) | ((L(l + 64) >> 4) << 4) | ((L(l + 96) >> 4) << 6);
      }
    }
  }
  return out;
}

/** Float32 values of `count` elements (a multiple of 256) stored as Q6_K blocks in `bytes`. */
export function dequantizeQ6K(bytes: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count);
  const signed = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / K_BLOCK; b++) {
    const base = b * Q6_K_BYTES;
    const d = half(bytes, base + 208);
    for (let chunk = 0; chunk < 2; chunk++) {
      const ql = base + 64 * chunk;
      const qh = base + 128 + 32 * chunk;
      const sc = base + 192 + 8 * chunk;
      const y = b * K_BLOCK + 128 * chunk;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const high = bytes[qh + l];
        const q1 = ((bytes[ql + l] & 0xf) | ((high & 3) << 4)) - 32;
        const q2 = ((bytes[ql + l + 32] & 0xf) | (((high >> 2) & 3) << 4)) - 32;
        const q3 = ((bytes[ql + l] >> 4) | (((high >> 4) & 3) << 4)) - 32;
        const q4 = ((bytes[ql + l + 32] >> 4) | (((high >> 6) & 3) << 4)) - 32;
        out[y + l] = f(d * signed[sc + is]) * q1;
        out[y + l + 32] = f(d * signed[sc + is + 2]) * q2;
        out[y + l + 64] = f(d * signed[sc + is + 4]) * q3;
        out[y + l + 96] = f(d * signed[sc + is + 6]) * q4;
      }
    }
  }
  return out;
}
