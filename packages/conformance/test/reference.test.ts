import type { AttentionSpec, DataId, Shape, TensorInfo } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { ReferenceBackend } from '../src/reference/index';

const ref = new ReferenceBackend();

function f32(values: number[], shape: Shape): TensorInfo {
  return { id: ref.upload(Float32Array.from(values)), shape, dtype: 'f32' };
}

function i32(values: number[], shape: Shape): TensorInfo {
  return { id: ref.upload(Int32Array.from(values)), shape, dtype: 'i32' };
}

async function values(id: DataId, shape: Shape, dtype: 'f32' | 'i32' = 'f32'): Promise<number[]> {
  return Array.from(await ref.read({ id, shape, dtype }));
}

/** A check that each element of `got` is within 10^-digits of `want`. */
function close(digits = 6): (got: number[], want: number[]) => void {
  return (got, want) => {
    expect(got).toHaveLength(want.length);
    for (const [i, g] of got.entries()) expect(g, `element ${i}`).toBeCloseTo(want[i], digits);
  };
}

describe('the conformance reference against hand-computed values', () => {
  it('multiplies matrices, transposed and batched with a broadcast operand', async () => {
    const a = f32([1, 2, 3, 4, 5, 6], [2, 3]);
    const b = f32([1, 0, 0, 1, 1, 1], [3, 2]);
    const spec = {
      batch: 1,
      m: 2,
      n: 2,
      k: 3,
      transA: false,
      transB: false,
      aBatchStride: 0,
      bBatchStride: 0,
    };
    expect(await values(ref.matmul(a, b, spec), [2, 2])).toEqual([4, 5, 10, 11]);
    // A stored [k, m] = [3, 2] and read transposed; B [n, k] transposed; two batches share B.
    const at = f32([1, 4, 2, 5, 3, 6, 1, 1, 1, 1, 1, 1], [2, 3, 2]);
    const bt = f32([1, 0, 1, 0, 1, 1], [2, 3]);
    const batched = { ...spec, batch: 2, transA: true, transB: true, aBatchStride: 6, bBatchStride: 0 };
    expect(await values(ref.matmul(at, bt, batched), [2, 2, 2])).toEqual([4, 5, 10, 11, 2, 2, 2, 2]);
  });

  it('computes softmax, log-softmax and cross-entropy of a row', async () => {
    const x = f32([0, Math.log(3)], [1, 2]);
    close()(await values(ref.fused.softmax(x), [1, 2]), [0.25, 0.75]);
    close()(await values(ref.fused.logSoftmax(x), [1, 2]), [Math.log(0.25), Math.log(0.75)]);
    const logits = f32([0, Math.log(3), 0, 0], [2, 2]);
    const loss = ref.fused.softmaxCrossEntropy(logits, i32([1, -100], [2]), -100);
    close()(await values(loss, [1]), [-Math.log(0.75)]);
  });

  it('rotates pairs by position times their inverse frequency from the offset, scaled', async () => {
    // [B, T, H, hd] = [1, 1, 1, 4], position 2 with offset 2: angles 2 and 2 / 100 (theta 10000), scale 1.5.
    const x = f32([1, 0, 0, 1], [1, 1, 1, 4]);
    const out = await values(ref.fused.rope(x, [2], [1, 0.01], 1.5), [1, 1, 1, 4]);
    close()(out, [1.5 * Math.cos(2), 1.5 * Math.sin(2), -1.5 * Math.sin(0.02), 1.5 * Math.cos(0.02)]);
  });

  it('attends causally from an offset, each query head reading its kv head', async () => {
    // q [1, 1, 2, 1] (two query heads, one kv head), k and v [1, 3, 1, 1]; offset 1 sees keys 0 and 1.
    const q = f32([1, 2], [1, 1, 2, 1]);
    const k = f32([0, Math.log(2), 100], [1, 3, 1, 1]);
    const v = f32([10, 20, 1000], [1, 3, 1, 1]);
    const out = await values(
      ref.fused.attention(q, k, v, {
        mask: { kind: 'causal' },
        offset: 1,
        window: 0,
        keyLengths: [],
        scale: 1,
      }),
      [1, 1, 2, 1],
    );
    // Head 0: weights softmax([0, ln 2]) = [1/3, 2/3]; head 1: softmax([0, 2 ln 2]) = [1/5, 4/5].
    close(4)(out, [10 / 3 + 40 / 3, 2 + 16]);
  });

  it('masks keys by prefix, window and key length; a query that sees no key gets 0', async () => {
    // Equal scores (k = 0), so each query averages the values v = [1, 2, 4] of the keys it sees.
    const q = f32([1, 1, 1], [1, 3, 1, 1]);
    const k = f32([0, 0, 0], [1, 3, 1, 1]);
    const v = f32([1, 2, 4], [1, 3, 1, 1]);
    const run = (spec: Partial<AttentionSpec>) =>
      values(
        ref.fused.attention(q, k, v, {
          mask: { kind: 'causal' },
          offset: 0,
          window: 0,
          keyLengths: [],
          scale: 1,
          ...spec,
        }),
        [1, 3, 1, 1],
      );
    close()(await run({}), [1, 1.5, 7 / 3]);
    close()(await run({ mask: { kind: 'prefix', length: 2 } }), [1.5, 1.5, 7 / 3]);
    close()(await run({ window: 2 }), [1, 1.5, 3]);
    close()(await run({ mask: { kind: 'none' }, keyLengths: [2] }), [1.5, 1.5, 1.5]);
    close()(await run({ window: 1, keyLengths: [1] }), [1, 0, 0]);
  });

  it('normalises rows (RMSNorm, LayerNorm)', async () => {
    const x = f32([3, 4], [1, 2]);
    close()(await values(ref.fused.rmsnorm(x, f32([1, 2], [2]), 0), [1, 2]), [
      3 / Math.sqrt(12.5),
      8 / Math.sqrt(12.5),
    ]);
    close()(await values(ref.fused.layernorm(x, f32([1, 1], [2]), f32([0, 1], [2]), 0), [1, 2]), [-1, 2]);
  });

  it('scans selectively: h = exp(Δ A) h + Δ B x, y = C · h + D x', async () => {
    const scan = ref.fused.selectiveScan(
      f32([1, 2], [1, 2, 1]), // x
      f32([0.5, 1], [1, 2, 1]), // Δ
      f32([-1, -2], [1, 2]), // A
      f32([1, 0, 0, 1], [1, 2, 2]), // B
      f32([1, 1, 1, 1], [1, 2, 2]), // C
      f32([0.5], [1]), // D
    );
    // h_0 = [0.5, 0], y_0 = 0.5 + 0.5; h_1 = [0.5 / e, 2], y_1 = 0.5 / e + 2 + 1
    close()(await values(scan, [1, 2, 1]), [1, 3 + 0.5 / Math.E]);
  });

  it('keeps integer semantics: wrapping products, truncating division, division by zero gives the dividend', async () => {
    const a = i32([7, -7, 65536, 5], [4]);
    const b = i32([2, 2, 65536, 0], [4]);
    expect(await values(ref.binary('div', a, b, [4]), [4], 'i32')).toEqual([3, -3, 1, 5]);
    expect(await values(ref.binary('mul', a, b, [4]), [4], 'i32')).toEqual([14, -14, 0, 0]);
  });

  it('gathers zeros for out-of-range ids, finds the first maximum, broadcasts', async () => {
    const table = f32([1, 2, 3, 4], [2, 2]);
    expect(await values(ref.gather(table, i32([1, 5, -1], [3])), [3, 2])).toEqual([3, 4, 0, 0, 0, 0]);
    const x = f32([1, 3, 3, 2], [1, 4]);
    expect(await values(ref.argmax(x, { outer: 1, size: 4, inner: 1 }), [1], 'i32')).toEqual([1]);
    const sum = ref.binary('add', f32([1, 2], [2, 1]), f32([10, 20, 30], [1, 3]), [2, 3]);
    expect(await values(sum, [2, 3])).toEqual([11, 21, 31, 12, 22, 32]);
  });

  it('rounds every f32 result to float32 once', async () => {
    expect(await values(ref.fill(1, 0.1, 'f32'), [1])).toEqual([Math.fround(0.1)]);
  });
});
