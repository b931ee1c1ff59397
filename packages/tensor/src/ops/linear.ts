import { assertDType } from '../dtype';
import { add } from '../elementwise';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { sumRows } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * x Wᵀ + b: a linear layer with a bias, x [..., in], weight [out, in] (stored as PyTorch and llama2.c do), bias
 * [out]; kernel: `linear(x, weight, bias)`. A backend adds the bias where it writes the product (on the CPU, in the
 * matrix product's own pass over its output), instead of a second pass over an output the caches have let go.
 */
export const linearOp = fusedOp({
  name: 'linear',
  inputs: ['x', 'weight', 'bias'],
  outputShape: ([x, weight]) => [...x.shape.slice(0, -1), weight.shape[0]],
  composite: (x: Tensor, weight: Tensor, bias: Tensor) => {
    const y = matmul(x, weight, { transB: true }); // [..., out]
    const out = add(y, bias);
    y.dispose();
    return out;
  },
  /** dx = g W, dW = gᵀ x over all rows, db = the rows of g summed. */
  gradient: {
    backward: ({ inputs: [x, weight], grad: g, needs }) => {
      const [out, inner] = weight.shape;
      return [
        needs[0] ? matmul(g, weight) : undefined,
        needs[1] ? matmul(g.reshape([-1, out]), x.reshape([-1, inner]), { transA: true }) : undefined,
        needs[2] ? sumRows(g) : undefined,
      ];
    },
  },
  // One row (the matrix-vector kernels), 3 to 128 (the few-row kernel), then the packed product split by columns and
  // by rows.
  cases: casesOver(
    [
      { rows: [1, 1], inner: 8, out: 6 },
      { rows: [3], inner: 7, out: 5 },
      { rows: [2, 9], inner: 16, out: 12 },
      { rows: [2, 64], inner: 128, out: 96 },
      { rows: [130], inner: 33, out: 200 },
      { rows: [3, 64], inner: 40, out: 96 },
    ],
    ({ rows, inner, out }) => ({
      label: `${shapeLabel([...rows, inner])} to ${out}`,
      inputs: [{ shape: [...rows, inner] }, { shape: [out, inner] }, { shape: [out] }],
      params: [],
      tol: REDUCTION,
    }),
  ),
});

/** x Wᵀ + b for x [..., in], weight [out, in] and bias [out]: a linear layer with a bias, fused where a backend can. */
export function linear(x: Tensor, weight: Tensor, bias: Tensor): Tensor {
  sameBackend('linear', x, weight, bias);
  for (const t of [x, weight, bias]) assertDType('linear', t.dtype, ['f32']);
  const inner = x.shape[x.rank - 1];
  if (
    x.rank < 2 ||
    weight.rank !== 2 ||
    weight.shape[1] !== inner ||
    bias.rank !== 1 ||
    bias.shape[0] !== weight.shape[0]
  ) {
    throw new Error(
      `linear: expected x [..., in] with at least 2 axes, weight [out, in] and bias [out], got x ${showShape(x.shape)}, ` +
        `weight ${showShape(weight.shape)} and bias ${showShape(bias.shape)}`,
    );
  }
  return runFused(linearOp, [x, weight, bias], []);
}
