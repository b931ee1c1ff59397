import { describe, expect, it } from 'vitest';
import { hfToLoomRotary, loomToHfRotary } from '../src/index';
import { randomArray, seededRandom } from './helpers';

/**
 * The permutation of Hugging Face's Llama conversion script written out independently: a [numHeads·headDim, in]
 * weight viewed as [numHeads, headDim/2, 2, in], axes 1 and 2 swapped, flattened back.
 */
function hfConversionPermute(
  weight: Float32Array,
  numHeads: number,
  headDim: number,
  inputs: number,
): Float32Array {
  const half = headDim / 2;
  const out = new Float32Array(weight.length);
  for (let head = 0; head < numHeads; head++) {
    for (let i = 0; i < half; i++) {
      for (let p = 0; p < 2; p++) {
        const source = head * headDim + i * 2 + p; // index (head, i, p) of [numHeads, half, 2]
        const target = head * headDim + p * half + i; // index (head, p, i) of [numHeads, 2, half]
        for (let col = 0; col < inputs; col++) out[target * inputs + col] = weight[source * inputs + col];
      }
    }
  }
  return out;
}

function matVec(weight: Float32Array, rows: number, x: Float32Array): Float64Array {
  const out = new Float64Array(rows);
  for (let row = 0; row < rows; row++) {
    let sum = 0;
    for (let col = 0; col < x.length; col++) sum += weight[row * x.length + col] * x[col];
    out[row] = sum;
  }
  return out;
}

const angle = (position: number, pair: number, headDim: number, theta: number) =>
  position * theta ** ((-2 * pair) / headDim);

/** Loom's RoPE: rotate the pairs (2i, 2i+1) of each head. */
function interleavedRope(q: Float64Array, headDim: number, position: number, theta: number): Float64Array {
  const out = new Float64Array(q.length);
  for (let base = 0; base < q.length; base += headDim) {
    for (let i = 0; i < headDim / 2; i++) {
      const a = q[base + 2 * i];
      const b = q[base + 2 * i + 1];
      const t = angle(position, i, headDim, theta);
      out[base + 2 * i] = a * Math.cos(t) - b * Math.sin(t);
      out[base + 2 * i + 1] = a * Math.sin(t) + b * Math.cos(t);
    }
  }
  return out;
}

/** transformers' RoPE: q·cos + rotate_half(q)·sin, rotate_half(x) = [-x2, x1], the angles repeated over both halves. */
function rotateHalfRope(q: Float64Array, headDim: number, position: number, theta: number): Float64Array {
  const half = headDim / 2;
  const out = new Float64Array(q.length);
  for (let base = 0; base < q.length; base += headDim) {
    for (let j = 0; j < headDim; j++) {
      const t = angle(position, j % half, headDim, theta);
      const rotated = j < half ? -q[base + j + half] : q[base + j - half];
      out[base + j] = q[base + j] * Math.cos(t) + rotated * Math.sin(t);
    }
  }
  return out;
}

const dot = (a: Float64Array, b: Float64Array, offset: number, length: number) => {
  let sum = 0;
  for (let i = 0; i < length; i++) sum += a[offset + i] * b[offset + i];
  return sum;
};

describe('rotary layout (HF rotate-half vs Loom interleaved pairs)', () => {
  const numHeads = 4;
  const numKvHeads = 2;
  const headDim = 8;
  const dim = numHeads * headDim;
  const random = seededRandom(11);
  const wqLoom = randomArray(dim * dim, random);
  const wkLoom = randomArray(numKvHeads * headDim * dim, random);

  it('un-permuting the conversion script’s permutation gives the Loom weight back, and the inverse re-permutes', () => {
    const wqHf = hfConversionPermute(wqLoom, numHeads, headDim, dim);
    expect(wqHf).not.toEqual(wqLoom);
    expect(hfToLoomRotary(wqHf, numHeads, headDim)).toEqual(wqLoom);
    expect(loomToHfRotary(wqLoom, numHeads, headDim)).toEqual(wqHf);
    const wkHf = hfConversionPermute(wkLoom, numKvHeads, headDim, dim);
    expect(hfToLoomRotary(wkHf, numKvHeads, headDim)).toEqual(wkLoom);
  });

  it('rotate-half RoPE on the HF projection equals interleaved RoPE on the Loom projection', () => {
    const wqHf = loomToHfRotary(wqLoom, numHeads, headDim);
    const wkHf = loomToHfRotary(wkLoom, numKvHeads, headDim);
    const x = randomArray(dim, random);
    const theta = 10000;
    for (const position of [0, 1, 7, 300]) {
      const qLoom = interleavedRope(matVec(wqLoom, dim, x), headDim, position, theta);
      const qHf = rotateHalfRope(matVec(wqHf, dim, x), headDim, position, theta);
      // The rotated HF query, its rows un-permuted, is the rotated Loom query.
      const qHfAsLoom = hfToLoomRotary(Float32Array.from(qHf), numHeads, headDim);
      expect(Math.max(...qLoom.map((value, i) => Math.abs(qHfAsLoom[i] - value)))).toBeLessThan(1e-5);
      // So every attention score q·k (query head h reads key head h / (numHeads / numKvHeads)) is the same.
      const kLoom = interleavedRope(matVec(wkLoom, numKvHeads * headDim, x), headDim, 3, theta);
      const kHf = rotateHalfRope(matVec(wkHf, numKvHeads * headDim, x), headDim, 3, theta);
      for (let head = 0; head < numHeads; head++) {
        const kvHead = Math.floor(head / (numHeads / numKvHeads));
        const scoreLoom = dot(qLoom.subarray(head * headDim), kLoom.subarray(kvHead * headDim), 0, headDim);
        const scoreHf = dot(qHf.subarray(head * headDim), kHf.subarray(kvHead * headDim), 0, headDim);
        expect(scoreHf).toBeCloseTo(scoreLoom, 9);
      }
      if (position > 0) {
        // Without the permutation the two conventions disagree.
        const unpermuted = rotateHalfRope(matVec(wqLoom, dim, x), headDim, position, theta);
        expect(Math.max(...unpermuted.map((value, i) => Math.abs(value - qLoom[i])))).toBeGreaterThan(1e-3);
      }
    }
  });
});
