import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { checkHalf, type HalfType, type HalfWeight, unpackHalves } from '../half-weight';
import { matmul } from '../matmul';
import { scope } from '../scope';
import { showShape, sizeOf } from '../shape';
import type { Tensor } from '../tensor';
import type { FusedCase } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** out [..., out] = x [..., in] · Wᵀ for W [out, in] in f32, x's leading axes folded into rows. */
function product(x: Tensor, w: Tensor): Tensor {
  const [out, inner] = w.shape;
  const rows = x.reshape([-1, inner]); // [rows, in]
  return matmul(rows, w, { transB: true }).reshape([...x.shape.slice(0, -1), out]); // [..., out]
}

/**
 * A case: x [...lead, in] (normal, scale `xScale`) times a random 16-bit weight [out, in] (values normal, scale 0.1,
 * rounded to the type).
 */
function halfCase(
  type: HalfType,
  lead: readonly number[],
  out: number,
  inner: number,
  xScale = 1,
): FusedCase<[HalfType]> {
  return {
    label: `${type} [${[...lead, inner].join(', ')}]${xScale === 1 ? '' : ` (x · ${xScale})`} x [${out}, ${inner}]`,
    inputs: [
      { shape: [...lead, inner], dist: { kind: 'normal', scale: xScale } },
      { shape: [out, inner / 2], dist: { kind: 'halves', type, scale: 0.1 } },
    ],
    params: [type],
    // The widened values are exact; only the f32 sum order differs.
    tol: { atol: 1e-5 * Math.sqrt(inner) * xScale, rtol: 1e-4 },
  };
}

/**
 * x · Wᵀ with W a 16-bit weight [out, in] (see HalfWeight); kernel: `halfMatmul(x, packed, type)`. The composite
 * widens W with primitives and runs the f32 matmul: the reference a kernel that widens as it reads is checked against.
 */
export const halfMatmulOp = fusedOp({
  name: 'halfMatmul',
  inputs: ['x', 'packed'],
  outputShape: ([x, packed]) => [...x.shape.slice(0, -1), packed.shape[0]],
  composite: (x: Tensor, packed: Tensor, type: HalfType) =>
    scope(() => product(x, unpackHalves(type, packed))),
  /** dx = g · W [..., in]; the packed bits have no gradient (16-bit weights are for inference). */
  gradient: {
    backward: ({ inputs: [x, packed], params: [type], grad: g, needs }) => [
      needs[0]
        ? scope(() => matmul(g.reshape([-1, packed.shape[0]]), unpackHalves(type, packed)).reshape(x.shape)) // [..., in]
        : undefined,
      undefined,
    ],
  },
  cases: [
    halfCase('bf16', [1], 3, 8),
    halfCase('bf16', [1], 65, 288),
    halfCase('bf16', [2, 3], 33, 98),
    halfCase('bf16', [17], 9, 64),
    halfCase('f16', [1], 3, 8),
    halfCase('f16', [1], 65, 288),
    halfCase('f16', [2, 3], 33, 98),
    halfCase('f16', [17], 9, 64),
    // Values of x past 2^16, which kernels that fold binary16's exponent bias into x must scale less.
    halfCase('f16', [1], 65, 288, 1e5),
    halfCase('f16', [17], 9, 64, 1e5),
  ],
});

/**
 * x [..., in] · Wᵀ -> [..., out] for a 16-bit weight W [out, in]: a backend's kernel widens the values as it reads
 * them; elsewhere the weight is widened per call (see halfMatmulOp).
 */
export function halfMatmul(x: Tensor, w: HalfWeight): Tensor {
  sameBackend('halfMatmul', x, w.packed);
  assertDType('halfMatmul', x.dtype, ['f32']);
  checkHalf('halfMatmul', w.type, w.packed);
  const inner = w.shape[1];
  if (x.rank < 1 || x.shape[x.rank - 1] !== inner) {
    throw new Error(
      `halfMatmul: x ${showShape(x.shape)} must end in the weight's input size ${inner} (weight [${w.shape.join(', ')}])`,
    );
  }
  if (sizeOf(x.shape) === 0) throw new Error('halfMatmul: x is empty; expected at least one row');
  return runFused(halfMatmulOp, [x, w.packed], [w.type]);
}
