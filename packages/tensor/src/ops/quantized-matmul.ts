import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import {
  checkQuantized,
  dequantize,
  type QuantizedWeight,
  type QuantType,
  quantFormat,
  quantizedShape,
  scaleFactors,
} from '../quantized-weight';
import { scope } from '../scope';
import { showShape, sizeOf } from '../shape';
import type { Tensor } from '../tensor';
import type { FusedCase } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** out [..., out] = x [..., in] · dequantize(w)ᵀ, x's leading axes folded into rows. */
function product(x: Tensor, w: Tensor): Tensor {
  const [out, inner] = w.shape;
  const rows = x.reshape([-1, inner]); // [rows, in]
  return matmul(rows, w, { transB: true }).reshape([...x.shape.slice(0, -1), out]); // [..., out]
}

/**
 * Root mean square of a weight value per unit of scale rms, for codes drawn uniformly over the type's range: int8
 * (Q8_0), -8..7 (Q4_0); Q4_K: √(E[s²]·E[q²] + E[m²]) with s, m uniform in 0..63 and q in 0..15, d and dmin
 * independent of equal rms; Q6_K: √(E[s²]·E[(q − 32)²]) with s uniform in -128..127 and q in 0..63.
 */
export const RMS_CODE: Readonly<Record<QuantType, number>> = {
  q8_0: 73.9,
  q4_0: 4.64,
  q4_k: 323.5,
  q6_k: 1365.7,
};

/** A bound on max|x| over an activation block of normal values: 32 values (Q8_0, Q4_0), 256 (Q4_K, Q6_K). */
const X_BLOCK_MAX: Readonly<Record<QuantType, number>> = { q8_0: 3.5, q4_0: 3.5, q4_k: 4.5, q6_k: 4.5 };

/**
 * The absolute error allowed per √in and unit of code rms, for kernels that quantize x to int8 per activation block
 * as llama.cpp does (the CPU's: per 32 for Q8_0 / Q4_0, per 256 for Q4_K as its Q8_K): each x moves by up to
 * max|x| / 254 (under X_BLOCK_MAX / 254 for a block of normal values), uniformly, so with scales uniform in ±0.02
 * (rms 0.0115) the error's standard deviation is at most X_BLOCK_MAX / 254 / √3 · 0.0115 · rms(code) · √in; this is
 * six of them. Wrong codes, order or scales miss by about the output's own size, 0.0115 · rms(code) · √in, about
 * fifteen times more.
 */
function activationError(type: QuantType): number {
  return (6 * X_BLOCK_MAX[type] * 0.0115) / (254 * Math.sqrt(3));
}

/** A case: x [...lead, in] times a random weight [out, in] of `type`, its scales of either sign, every code word random. */
function quantCase(
  type: QuantType,
  lead: readonly number[],
  out: number,
  inner: number,
): FusedCase<[QuantType]> {
  const format = quantFormat(type);
  const blocks = inner / format.values;
  return {
    label: `${type} [${[...lead, inner].join(', ')}] x [${out}, ${inner}]`,
    inputs: [
      { shape: [...lead, inner] },
      { shape: [out, blocks * format.scales], dist: { kind: 'uniform', low: -0.02, high: 0.02 } },
      {
        shape: [out, blocks * format.words],
        dist: { kind: 'ints', low: -2_147_483_648, high: 2_147_483_647 },
      },
    ],
    params: [type],
    tol: { atol: activationError(type) * RMS_CODE[type] * Math.sqrt(inner), rtol: 1e-4 },
  };
}

/**
 * x · Wᵀ with W a block-quantized weight [out, in] (see QuantizedWeight); kernel:
 * `quantizedMatmul(x, scales, quants, type)`. The composite dequantizes W with primitives and
 * runs the f32 matmul: the reference every kernel that reads the blocks directly is checked against.
 */
export const quantizedMatmulOp = fusedOp({
  name: 'quantizedMatmul',
  inputs: ['x', 'scales', 'quants'],
  outputShape: ([x, scales]) => [...x.shape.slice(0, -1), scales.shape[0]],
  composite: (x: Tensor, scales: Tensor, quants: Tensor, type: QuantType) =>
    scope(() => product(x, dequantize(type, scales, quants))),
  /**
   * dx = g · W [..., in]; W is linear in the scales (see scaleFactors), so d scales[o, b, k] = sum over the block's
   * values v of (gᵀ x)[o, b, v] · factors[o, b, k, v]; the integer codes have no gradient.
   */
  gradient: {
    backward: ({ inputs: [x, scales, quants], params: [type], grad: g, needs }) => {
      const [out, inner] = quantizedShape(type, scales.shape);
      const { values, scales: perBlock } = quantFormat(type);
      const blocks = inner / values;
      const dx = needs[0]
        ? scope(() => {
            const w = dequantize(type, scales, quants); // [out, in]
            return matmul(g.reshape([-1, out]), w).reshape(x.shape); // [..., in]
          })
        : undefined;
      const dScales = needs[1]
        ? scope(() => {
            const outer = matmul(g.reshape([-1, out]), x.reshape([-1, inner]), { transA: true }); // [out, in]
            const perValue = outer.reshape([out, blocks, 1, values]).mul(scaleFactors(type, quants)); // [out, blocks, perBlock, values]
            return perValue.sum(-1).reshape([out, blocks * perBlock]); // [out, blocks · perBlock]
          })
        : undefined;
      return [dx, dScales, undefined];
    },
  },
  cases: [
    quantCase('q8_0', [1], 3, 32),
    quantCase('q8_0', [1], 65, 288),
    quantCase('q8_0', [2, 3], 33, 96),
    quantCase('q8_0', [17], 8, 64),
    quantCase('q8_0', [1], 5, 2080),
    quantCase('q4_0', [1], 3, 32),
    quantCase('q4_0', [1], 65, 288),
    quantCase('q4_0', [2, 3], 33, 96),
    quantCase('q4_0', [17], 8, 64),
    quantCase('q4_0', [2], 3, 2080),
    quantCase('q4_k', [1], 3, 256),
    quantCase('q4_k', [1], 65, 512),
    quantCase('q4_k', [2, 3], 33, 768),
    quantCase('q4_k', [17], 8, 256),
    quantCase('q4_k', [5], 1, 1024),
    quantCase('q4_k', [2], 3, 8448),
    quantCase('q6_k', [1], 3, 256),
    quantCase('q6_k', [1], 65, 512),
    quantCase('q6_k', [2, 3], 33, 768),
    quantCase('q6_k', [17], 8, 256),
    quantCase('q6_k', [5], 1, 1024),
    quantCase('q6_k', [1], 2, 8448),
  ],
});

/**
 * x [..., in] · Wᵀ -> [..., out] for a quantized weight W [out, in]: a backend's kernel reads the
 * blocks directly; elsewhere the weight is dequantized per call (see quantizedMatmulOp).
 */
export function quantizedMatmul(x: Tensor, w: QuantizedWeight): Tensor {
  sameBackend('quantizedMatmul', x, w.scales, w.quants);
  assertDType('quantizedMatmul', x.dtype, ['f32']);
  checkQuantized('quantizedMatmul', w.type, w.scales, w.quants);
  const inner = w.shape[1];
  if (x.rank < 1 || x.shape[x.rank - 1] !== inner) {
    throw new Error(
      `quantizedMatmul: x ${showShape(x.shape)} must end in the weight's input size ${inner} (weight [${w.shape.join(', ')}])`,
    );
  }
  if (sizeOf(x.shape) === 0) throw new Error('quantizedMatmul: x is empty; expected at least one row');
  return runFused(quantizedMatmulOp, [x, w.scales, w.quants], [w.type]);
}
