import { arange, full, tensor } from '../creation';
import { assertDType } from '../dtype';
import { add, mul, pow, sub } from '../elementwise';
import { concat, slice } from '../movement';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** x [B, T, H, hd]: pairs (2i, 2i+1) rotate by angle (offset + t) * theta^(-2i/hd). */
function rotate(x: Tensor, offset: number, theta: number): Tensor {
  return scope(() => {
    const [b, t, h, hd] = x.shape;
    const half = hd / 2;
    const freq = pow(
      full([half], theta, { backend: x.backend }),
      arange(half, 0, -2 / hd, { backend: x.backend }),
    ); // [half]
    const positions = arange(t, offset, 1, { backend: x.backend }).reshape([t, 1]); // [T, 1]
    const angle = mul(positions, freq).reshape([t, 1, half]); // [T, 1, half]
    const cos = angle.cos();
    const sin = angle.sin();
    const pairs = x.reshape([b, t, h, half, 2]); // [B, T, H, half, 2]
    const even = slice(pairs, [0, 0, 0, 0, 0], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const odd = slice(pairs, [0, 0, 0, 0, 1], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const outEven = sub(mul(even, cos), mul(odd, sin)).reshape([b, t, h, half, 1]);
    const outOdd = add(mul(even, sin), mul(odd, cos)).reshape([b, t, h, half, 1]);
    return concat([outEven, outOdd], 4).reshape([b, t, h, hd]); // [B, T, H, hd]
  });
}

/**
 * Rotary position embedding: rotates pairs (2i, 2i+1) of x [B, T, H, headDim] by
 * (offset + t) * theta^(-2i/headDim); kernel: `rope(x, offset, theta)`.
 */
export const ropeOp = fusedOp({
  name: 'rope',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: rotate,
  /**
   * Rotation by -angle is the rotation by +angle conjugated with the reflection P that
   * negates the odd element of each pair, so dx = P rope(P g).
   */
  gradient: {
    backward: ({ inputs: [x], params: [offset, theta], grad: g }) => {
      const hd = x.shape[3];
      const signs = Array.from({ length: hd }, (_, i) => (i % 2 === 0 ? 1 : -1));
      const p = tensor(signs, [hd], { backend: g.backend });
      return [rope(g.mul(p), { offset, theta }).mul(p)];
    },
  },
  cases: casesOver(
    [
      { shape: [1, 1, 1, 2], offset: 0, theta: 10_000 },
      { shape: [2, 7, 3, 8], offset: 0, theta: 10_000 },
      { shape: [1, 1, 6, 48], offset: 255, theta: 10_000 },
      { shape: [1, 65, 4, 16], offset: 5, theta: 500_000 },
      { shape: [2, 3, 2, 64], offset: 1000, theta: 10_000 },
    ],
    ({ shape, offset, theta }) => ({
      label: `${shapeLabel(shape)} offset ${offset} theta ${theta}`,
      inputs: [{ shape }],
      params: [offset, theta],
      tol: { atol: 2e-4, rtol: 1e-4 },
    }),
  ),
});

export interface RopeOptions {
  /** Position of the first row (tokens already in the cache). */
  readonly offset?: number;
  /** Base of the rotation frequencies. */
  readonly theta?: number;
}

/** Rotary position embedding of x [B, T, H, headDim], rotating pairs (2i, 2i+1). */
export function rope(x: Tensor, options: RopeOptions = {}): Tensor {
  const offset = options.offset ?? 0;
  const theta = options.theta ?? 10000;
  assertDType('rope', x.dtype, ['f32']);
  if (x.rank !== 4 || x.shape[3] % 2 !== 0) {
    throw new Error(
      `rope: expected x of shape [B, T, H, headDim] with an even headDim, got ${showShape(x.shape)}`,
    );
  }
  if (!Number.isInteger(offset) || offset < 0)
    throw new Error(`rope: offset must be a non-negative integer, got ${offset}`);
  return runFused(ropeOp, [x], [offset, theta]);
}
