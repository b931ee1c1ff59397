import { add } from '../elementwise';
import { writeSlice } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { attention } from './attention';
import type { AttentionMask, AttentionSpec } from './attention-mask';
import { attentionSpecOfShapes } from './attention-options';
import { casesOver, shapeLabel } from './case';
import { runFusedInPlace } from './dispatch';
import { inPlaceOp } from './op';
import { rmsnorm } from './rmsnorm';
import { rope, ropeInverseFrequencies } from './rope';
import {
  checkOperands,
  type ProductWeight,
  productOf,
  type WeightFormat,
  weightCaseInputs,
  weightInputs,
  weightTolerance,
} from './weight-product';

/** The kernel's parameters (`attentionStep` checks and builds them). */
export interface AttentionStepParams {
  /** The RMSNorm's epsilon. */
  readonly eps: number;
  /** RoPE of the queries and keys: one inverse frequency per pair of a head, and the factor on cos and sin. */
  readonly inverseFrequencies: readonly number[];
  readonly ropeScale: number;
  /** Attention over the keys, its offset the new token's position (the row of keys and values written). */
  readonly attention: AttentionSpec;
  /** How each projection's weight is stored (see WeightInputs). */
  readonly formats: AttentionStepFormats;
}

/** How the four projections of an attention block are stored. */
export interface AttentionStepFormats {
  readonly wq: WeightFormat;
  readonly wk: WeightFormat;
  readonly wv: WeightFormat;
  readonly wo: WeightFormat;
}

const F32: AttentionStepFormats = { wq: 'f32', wk: 'f32', wv: 'f32', wo: 'f32' };

/** The weights of a pre-norm llama attention block, as `attentionStep` takes them: projections f32, 16-bit or quantized. */
export interface AttentionStepWeights {
  /** The RMSNorm's weight [dim]. */
  readonly norm: Tensor;
  /** [H·hd, dim] */
  readonly wq: ProductWeight;
  /** [Hkv·hd, dim] */
  readonly wk: ProductWeight;
  /** [Hkv·hd, dim] */
  readonly wv: ProductWeight;
  /** [dim, H·hd] */
  readonly wo: ProductWeight;
}

/** Options of `attentionStep`. */
export interface AttentionStepOptions {
  /** Position of the new token: its keys and values go to row `offset` of the store. */
  readonly offset: number;
  /** RoPE's inverse frequencies, headDim / 2 of them (a scaled table, or `ropeInverseFrequencies`). */
  readonly inverseFrequencies: readonly number[];
  /** The factor on RoPE's cos and sin (YaRN's attention factor); default 1. */
  readonly ropeScale?: number;
  /** The RMSNorm's epsilon; default 1e-5. */
  readonly eps?: number;
  /** Which keys the token sees (default causal: all up to its own), as `attention` takes it. */
  readonly mask?: AttentionMask;
  /** Sliding window W: the token sees only keys s > offset - W (default: none). */
  readonly window?: number;
  /** Score multiplier; defaults to 1/sqrt(headDim). */
  readonly scale?: number;
}

/** A conformance case's sizes. */
interface StepCase {
  readonly batch: number;
  readonly dim: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly hd: number;
  readonly keys: number;
  readonly offset: number;
  readonly window?: number;
  readonly formats?: AttentionStepFormats;
}

/**
 * One decode step of a pre-norm llama attention block, in place: with n = rmsnorm(x, normWeight, eps), the token's
 * keys rope(n Wkᵀ) and values n Wvᵀ go to row `offset` of keys and values [B, S, Hkv, hd], and
 * out = x + attention(rope(n Wqᵀ), keys, values) Woᵀ. x and out [B, 1, dim], wq [H·hd, dim], wk and wv [Hkv·hd, dim],
 * wo [dim, H·hd], each projection f32, 16-bit or block-quantized and given as its data and scales (see WeightInputs).
 * A backend runs the whole attention half of a layer in one call, where the separate ops cross into it eleven times.
 * Kernel: `attentionStep(out, x, normWeight, wq, wqScales, wk, wkScales, wv, wvScales, wo, woScales, keys, values,
 * params)`.
 */
export const attentionStepOp = inPlaceOp({
  name: 'attentionStep',
  inputs: [
    'out',
    'x',
    'normWeight',
    'wq',
    'wqScales',
    'wk',
    'wkScales',
    'wv',
    'wvScales',
    'wo',
    'woScales',
    'keys',
    'values',
  ],
  composite: (
    out: Tensor,
    x: Tensor,
    normWeight: Tensor,
    wq: Tensor,
    wqScales: Tensor,
    wk: Tensor,
    wkScales: Tensor,
    wv: Tensor,
    wvScales: Tensor,
    wo: Tensor,
    woScales: Tensor,
    keys: Tensor,
    values: Tensor,
    params: AttentionStepParams,
  ) => {
    scope(() => {
      const [b] = x.shape;
      const [, , hkv, hd] = keys.shape;
      const h = wq.shape[0] / hd; // every format's data has a row per output
      const { offset } = params.attention;
      const { formats } = params;
      const rotated = (t: Tensor) =>
        rope(t, { offset, inverseFrequencies: params.inverseFrequencies, scale: params.ropeScale });
      const n = rmsnorm(x, normWeight, params.eps); // [B, 1, dim]
      const q = rotated(productOf(n, wq, wqScales, formats.wq).reshape([b, 1, h, hd])); // [B, 1, H, hd]
      const k = rotated(productOf(n, wk, wkScales, formats.wk).reshape([b, 1, hkv, hd])); // [B, 1, Hkv, hd]
      const v = productOf(n, wv, wvScales, formats.wv).reshape([b, 1, hkv, hd]); // [B, 1, Hkv, hd]
      writeSlice(keys, k, [0, offset, 0, 0]);
      writeSlice(values, v, [0, offset, 0, 0]);
      const heads = attention(q, keys, values, params.attention).reshape([b, 1, h * hd]); // [B, 1, H·hd]
      writeSlice(out, add(x, productOf(heads, wo, woScales, formats.wo)), [0, 0, 0]);
    });
  },
  gradient: 'none',
  cases: casesOver<StepCase, [AttentionStepParams]>(
    [
      { batch: 1, dim: 8, heads: 2, kvHeads: 1, hd: 4, keys: 6, offset: 3 },
      { batch: 2, dim: 12, heads: 4, kvHeads: 2, hd: 4, keys: 5, offset: 4 },
      { batch: 1, dim: 64, heads: 4, kvHeads: 4, hd: 16, keys: 40, offset: 33, window: 8 },
      { batch: 1, dim: 48, heads: 6, kvHeads: 2, hd: 8, keys: 9, offset: 0 },
      {
        ...{ batch: 1, dim: 64, heads: 4, kvHeads: 2, hd: 16, keys: 12, offset: 7 },
        formats: { wq: 'q8_0', wk: 'q8_0', wv: 'q8_0', wo: 'q8_0' },
      },
      {
        ...{ batch: 2, dim: 96, heads: 2, kvHeads: 2, hd: 16, keys: 5, offset: 2 },
        formats: { wq: 'q4_0', wk: 'q8_0', wv: 'f16', wo: 'q4_0' },
      },
      {
        ...{ batch: 1, dim: 256, heads: 4, kvHeads: 4, hd: 64, keys: 9, offset: 8 },
        formats: { wq: 'q4_k', wk: 'q4_k', wv: 'q6_k', wo: 'q4_k' },
      },
      {
        ...{ batch: 1, dim: 24, heads: 3, kvHeads: 1, hd: 8, keys: 4, offset: 1 },
        formats: { wq: 'bf16', wk: 'f32', wv: 'bf16', wo: 'f16' },
      },
    ],
    ({ batch, dim, heads, kvHeads, hd, keys, offset, window, formats = F32 }) => {
      const store = [batch, keys, kvHeads, hd];
      const { wq, wk, wv, wo } = formats;
      const compact = [wq, wk, wv, wo].some((f) => f !== 'f32');
      const spec = attentionSpecOfShapes('attentionStep', [batch, 1, heads, hd], store, store, {
        offset,
        window,
      });
      return {
        label: `x ${shapeLabel([batch, 1, dim])} heads ${heads}/${kvHeads}x${hd} keys ${shapeLabel(store)} at ${offset}${window ? ` window ${window}` : ''}${compact ? ` ${wq}/${wk}/${wv}/${wo}` : ''}`,
        inputs: [
          { shape: [batch, 1, dim] },
          { shape: [batch, 1, dim] },
          { shape: [dim], dist: { kind: 'positive' } },
          ...weightCaseInputs(wq, heads * hd, dim),
          ...weightCaseInputs(wk, kvHeads * hd, dim),
          ...weightCaseInputs(wv, kvHeads * hd, dim),
          ...weightCaseInputs(wo, dim, heads * hd),
          { shape: store },
          { shape: store },
        ],
        params: [
          {
            eps: 1e-5,
            inverseFrequencies: ropeInverseFrequencies(hd, 10_000),
            ropeScale: 1,
            attention: spec,
            formats,
          },
        ],
        tol: weightTolerance([wq, wk, wv, wo], Math.max(dim, heads * hd)),
      };
    },
  ),
});

/**
 * One decode step of a pre-norm llama attention block, in place (see `attentionStepOp`): writes the token's keys
 * and values into row `options.offset` of the store's keys and values [B, S, Hkv, hd] and its block output
 * x + attention Woᵀ into out [B, 1, dim].
 */
export function attentionStep(
  out: Tensor,
  x: Tensor,
  weights: AttentionStepWeights,
  store: { readonly keys: Tensor; readonly values: Tensor },
  options: AttentionStepOptions,
): void {
  const { norm: normWeight, wq, wk, wv, wo } = weights;
  const { keys, values } = store;
  const [q, k, v, o] = [wq, wk, wv, wo].map(weightInputs);
  checkOperands('attentionStep', [out, x, normWeight, keys, values], [q, k, v, o]);
  const [b, t, dim] = x.shape;
  if (x.rank !== 3 || t !== 1 || !shapesEqual(out.shape, x.shape)) {
    throw new Error(
      `attentionStep: expected x and out [B, 1, dim] (one token per row), got x ${showShape(x.shape)}, out ${showShape(out.shape)}`,
    );
  }
  if (keys.rank !== 4 || keys.shape[0] !== b) {
    throw new Error(
      `attentionStep: expected keys [${b}, S, Hkv, hd] (x's batch), got ${showShape(keys.shape)}`,
    );
  }
  const [, , hkv, hd] = keys.shape;
  const heads = hd === 0 ? 0 : wq.shape[0] / hd;
  if (!Number.isInteger(heads) || heads === 0) {
    throw new Error(
      `attentionStep: wq must have H·hd rows, a non-zero multiple of hd ${hd} (from keys ${showShape(keys.shape)}), ` +
        `got ${showShape(wq.shape)}`,
    );
  }
  const expected: [string, ProductWeight | Tensor, readonly number[]][] = [
    ['normWeight', normWeight, [dim]],
    ['wq', wq, [heads * hd, dim]],
    ['wk', wk, [hkv * hd, dim]],
    ['wv', wv, [hkv * hd, dim]],
    ['wo', wo, [dim, heads * hd]],
  ];
  for (const [name, w, shape] of expected) {
    if (!shapesEqual(w.shape, shape)) {
      throw new Error(
        `attentionStep: ${name} must have shape ${showShape(shape)} (dim ${dim} from x, Hkv ${hkv} and hd ${hd} from keys, ` +
          `H·hd from wq, a multiple of hd), got ${showShape(w.shape)}`,
      );
    }
  }
  const s = keys.shape[1];
  if (!Number.isInteger(options.offset) || options.offset < 0 || options.offset >= s) {
    throw new Error(
      `attentionStep: offset must be an integer in [0, ${s}) (a row of keys), got ${options.offset}`,
    );
  }
  if (hd % 2 !== 0 || options.inverseFrequencies.length !== hd / 2) {
    throw new Error(
      `attentionStep: expected ${hd / 2} inverse frequencies (one per pair of a head of ${hd}, an even size), got ${options.inverseFrequencies.length}`,
    );
  }
  const spec = attentionSpecOfShapes('attentionStep', [b, 1, heads, hd], keys.shape, values.shape, {
    mask: options.mask,
    offset: options.offset,
    window: options.window,
    scale: options.scale,
  });
  const params: AttentionStepParams = {
    eps: options.eps ?? 1e-5,
    inverseFrequencies: options.inverseFrequencies,
    ropeScale: options.ropeScale ?? 1,
    attention: spec,
    formats: { wq: q.format, wk: k.format, wv: v.format, wo: o.format },
  };
  const inputs = [
    out,
    x,
    normWeight,
    q.data,
    q.scales,
    k.data,
    k.scales,
    v.data,
    v.scales,
    o.data,
    o.scales,
  ] as const;
  runFusedInPlace(attentionStepOp, [...inputs, keys, values], [params]);
}
