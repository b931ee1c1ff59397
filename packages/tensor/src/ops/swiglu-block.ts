import { add } from '../elementwise';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { lastDimMatches } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { rmsnorm } from './rmsnorm';
import { swiglu } from './swiglu';
import {
  checkOperands,
  type ProductWeight,
  productOf,
  type WeightFormat,
  weightCaseInputs,
  weightInputs,
  weightTolerance,
} from './weight-product';

/** How the three weights of a SwiGLU block are stored (see WeightInputs). */
export interface SwigluFormats {
  readonly w1: WeightFormat;
  readonly w3: WeightFormat;
  readonly w2: WeightFormat;
}

const F32: SwigluFormats = { w1: 'f32', w3: 'f32', w2: 'f32' };

/** A case's sizes and weight formats. */
interface BlockCase {
  readonly rows: readonly number[];
  readonly dim: number;
  readonly hidden: number;
  readonly formats?: SwigluFormats;
}

/**
 * x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ with n = rmsnorm(x, normWeight, eps): a pre-norm SwiGLU feed-forward
 * and its residual, one call (llama's second half of a block). x [..., dim], normWeight [dim], w1 and w3
 * [hidden, dim], w2 [dim, hidden], weights stored [out, in], each f32, 16-bit or block-quantized and given as its
 * data and scales (see WeightInputs); kernel:
 * `swigluBlock(x, normWeight, w1, w1Scales, w3, w3Scales, w2, w2Scales, eps, formats)`.
 */
export const swigluBlockOp = fusedOp({
  name: 'swigluBlock',
  inputs: ['x', 'normWeight', 'w1', 'w1Scales', 'w3', 'w3Scales', 'w2', 'w2Scales'],
  outputShape: ([x]) => x.shape,
  composite: (
    x: Tensor,
    normWeight: Tensor,
    w1: Tensor,
    w1Scales: Tensor,
    w3: Tensor,
    w3Scales: Tensor,
    w2: Tensor,
    w2Scales: Tensor,
    eps: number,
    formats: SwigluFormats,
  ) =>
    scope(() => {
      const n = rmsnorm(x, normWeight, eps); // [..., dim]
      const gate = productOf(n, w1, w1Scales, formats.w1); // [..., hidden]
      const h = swiglu(gate, productOf(n, w3, w3Scales, formats.w3)); // [..., hidden]
      return add(x, productOf(h, w2, w2Scales, formats.w2)); // [..., dim]
    }),
  gradient: 'through-composite',
  cases: casesOver<BlockCase, [number, SwigluFormats]>(
    [
      { rows: [1, 1], dim: 4, hidden: 4 },
      { rows: [1, 1], dim: 288, hidden: 768 },
      { rows: [2, 1], dim: 12, hidden: 20 },
      { rows: [3], dim: 7, hidden: 9 },
      { rows: [1, 5], dim: 64, hidden: 172 },
      { rows: [1, 1], dim: 64, hidden: 96, formats: { w1: 'q8_0', w3: 'q8_0', w2: 'q8_0' } },
      { rows: [2, 1], dim: 96, hidden: 64, formats: { w1: 'q4_0', w3: 'q8_0', w2: 'q4_0' } },
      { rows: [1, 1], dim: 256, hidden: 512, formats: { w1: 'q4_k', w3: 'q4_k', w2: 'q6_k' } },
      { rows: [1, 1], dim: 66, hidden: 10, formats: { w1: 'bf16', w3: 'f16', w2: 'f32' } },
      { rows: [3], dim: 64, hidden: 64, formats: { w1: 'f16', w3: 'f16', w2: 'q8_0' } },
    ],
    ({ rows, dim, hidden, formats = F32 }) => {
      const compact = Object.values(formats).filter((f) => f !== 'f32');
      return {
        label: `${shapeLabel([...rows, dim])} hidden ${hidden}${compact.length > 0 ? ` ${formats.w1}/${formats.w3}/${formats.w2}` : ''}`,
        inputs: [
          { shape: [...rows, dim] },
          { shape: [dim], dist: { kind: 'positive' } },
          ...weightCaseInputs(formats.w1, hidden, dim),
          ...weightCaseInputs(formats.w3, hidden, dim),
          ...weightCaseInputs(formats.w2, dim, hidden),
        ],
        params: [1e-5, formats],
        tol: weightTolerance([formats.w1, formats.w3, formats.w2], Math.max(dim, hidden)),
      };
    },
  ),
});

/** The weights of a pre-norm SwiGLU block, each f32, 16-bit or block-quantized. */
export interface SwigluWeights {
  /** The RMSNorm's weight [dim]. */
  readonly norm: Tensor;
  /** [hidden, dim] */
  readonly w1: ProductWeight;
  /** [hidden, dim] */
  readonly w3: ProductWeight;
  /** [dim, hidden] */
  readonly w2: ProductWeight;
}

/**
 * The pre-norm SwiGLU feed-forward with its residual, x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ where
 * n = rmsnorm(x, norm, eps): x [..., dim], norm [dim], w1 and w3 [hidden, dim], w2 [dim, hidden], each weight f32,
 * 16-bit or block-quantized.
 */
export function swigluBlock(x: Tensor, weights: SwigluWeights, eps = 1e-5): Tensor {
  const { norm: normWeight, w1, w3, w2 } = weights;
  const [i1, i3, i2] = [w1, w3, w2].map(weightInputs);
  checkOperands('swigluBlock', [x, normWeight], [i1, i3, i2]);
  if (x.rank < 2) {
    throw new Error(
      `swigluBlock: expected x [..., rows, dim] with at least 2 axes, got ${showShape(x.shape)}`,
    );
  }
  lastDimMatches('swigluBlock', x, normWeight, 'normWeight');
  const dim = x.shape[x.rank - 1];
  const hidden = w1.shape[0];
  const expected: [string, ProductWeight, number, number][] = [
    ['w1', w1, hidden, dim],
    ['w3', w3, hidden, dim],
    ['w2', w2, dim, hidden],
  ];
  for (const [name, w, rows, cols] of expected) {
    if (w.shape.length !== 2 || w.shape[0] !== rows || w.shape[1] !== cols) {
      throw new Error(
        `swigluBlock: ${name} must have shape [${rows}, ${cols}] (w1 and w3 [hidden, dim], w2 [dim, hidden], ` +
          `dim ${dim} from x ${showShape(x.shape)}, hidden from w1), got ${showShape(w.shape)}`,
      );
    }
  }
  const formats = { w1: i1.format, w3: i3.format, w2: i2.format };
  const inputs = [x, normWeight, i1.data, i1.scales, i3.data, i3.scales, i2.data, i2.scales] as const;
  return runFused(swigluBlockOp, inputs, [eps, formats]);
}
