import { arange, tensor } from '../creation';
import { assertDType } from '../dtype';
import { add, mul, sub } from '../elementwise';
import { concat, slice } from '../movement';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * The plain RoPE inverse frequencies theta^(-2i/headDim) of pairs i < headDim / 2, in float64: the table
 * `rope` uses when given only a theta, and the base every RoPE scaling starts from.
 */
export function ropeInverseFrequencies(headDim: number, theta: number): number[] {
  return Array.from({ length: headDim / 2 }, (_, i) => theta ** (-(2 * i) / headDim));
}

/**
 * x [B, T, H, hd]: pairs (2i, 2i+1) of entry b rotate by angle (offsets[b] + t) * freqs[i]; cos and sin are scaled
 * by `scale`.
 */
function rotate(x: Tensor, offsets: readonly number[], freqs: readonly number[], scale: number): Tensor {
  return scope(() => {
    const [b, t, h, hd] = x.shape;
    const half = hd / 2;
    const freq = tensor(freqs, [half], { backend: x.backend }); // [half]
    const starts = tensor(offsets, [b, 1], { backend: x.backend }); // [B, 1]
    const steps = arange(t, 0, 1, { backend: x.backend }).reshape([1, t]); // [1, T]
    const positions = add(starts, steps).reshape([b * t, 1]); // [B·T, 1]
    const angle = mul(positions, freq).reshape([b, t, 1, half]); // [B, T, 1, half]
    const cos = angle.cos().mul(scale);
    const sin = angle.sin().mul(scale);
    const pairs = x.reshape([b, t, h, half, 2]); // [B, T, H, half, 2]
    const even = slice(pairs, [0, 0, 0, 0, 0], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const odd = slice(pairs, [0, 0, 0, 0, 1], [b, t, h, half, 1]).reshape([b, t, h, half]);
    const outEven = sub(mul(even, cos), mul(odd, sin)).reshape([b, t, h, half, 1]);
    const outOdd = add(mul(even, sin), mul(odd, cos)).reshape([b, t, h, half, 1]);
    return concat([outEven, outOdd], 4).reshape([b, t, h, hd]); // [B, T, H, hd]
  });
}

/**
 * The kernel's parameters: the position of each batch entry's first row, one inverse frequency per pair, the
 * factor on cos and sin.
 */
type RopeParams = [offsets: readonly number[], inverseFrequencies: readonly number[], scale: number];

/** A conformance case: x's shape, the offset of each batch entry, a theta whose odd pairs are slowed by `divide`, the scale. */
interface RopeCase {
  readonly shape: [number, number, number, number];
  readonly offsets: readonly number[];
  readonly theta: number;
  readonly divide: number;
  readonly scale: number;
}

/**
 * Rotary position embedding: rotates pairs (2i, 2i+1) of x [B, T, H, headDim] of batch entry b by
 * (offsets[b] + t) * freqs[i] and scales them by `scale` (YaRN's attention factor; 1 for plain RoPE); kernel:
 * `rope(x, offsets, freqs, scale)`, offsets holding B positions and freqs headDim / 2 inverse frequencies.
 */
export const ropeOp = fusedOp({
  name: 'rope',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: rotate,
  /**
   * A rotation's transpose is the rotation by -angle: the same kernel with every inverse frequency negated (cos
   * unchanged, sin negated), the scale the same both ways. One pass, where conjugating with the reflection that
   * negates each pair's odd element took two multiplications more (the llama step's 16: 0.84 ms).
   */
  gradient: {
    backward: ({ params: [positions, inverseFrequencies, scale], grad: g }) => [
      rope(g, { positions, inverseFrequencies: inverseFrequencies.map((f) => -f), scale }),
    ],
  },
  cases: casesOver<RopeCase, RopeParams>(
    [
      { shape: [1, 1, 1, 2], offsets: [0], theta: 10_000, divide: 1, scale: 1 },
      { shape: [2, 7, 3, 8], offsets: [0, 0], theta: 10_000, divide: 1, scale: 1 },
      { shape: [1, 1, 6, 48], offsets: [255], theta: 10_000, divide: 1, scale: 1 },
      { shape: [1, 65, 4, 16], offsets: [5], theta: 500_000, divide: 1, scale: 1 },
      { shape: [2, 3, 2, 64], offsets: [1000, 1000], theta: 10_000, divide: 1, scale: 1 },
      // Batch entries at their own positions (the one-token steps of several sequences decoded together).
      { shape: [5, 1, 3, 16], offsets: [7, 0, 130, 7, 64], theta: 10_000, divide: 1, scale: 1 },
      { shape: [3, 4, 2, 8], offsets: [2, 9, 0], theta: 10_000, divide: 1, scale: 1 },
      // Scaled tables: every other pair slowed by 4 (a ramp like YaRN's and Llama 3's) and cos/sin scaled.
      { shape: [2, 5, 3, 12], offsets: [3, 3], theta: 10_000, divide: 4, scale: 1.1386 },
      { shape: [1, 9, 2, 64], offsets: [300], theta: 500_000, divide: 8, scale: 0.75 },
    ],
    ({ shape, offsets, theta, divide, scale }) => ({
      label: `${shapeLabel(shape)} offsets ${offsets.join(',')} theta ${theta}${divide === 1 ? '' : ` odd pairs / ${divide}`} scale ${scale}`,
      inputs: [{ shape }],
      params: [
        offsets,
        ropeInverseFrequencies(shape[3], theta).map((f, i) => (i % 2 === 1 ? f / divide : f)),
        scale,
      ],
      tol: { atol: 2e-4, rtol: 1e-4 },
    }),
  ),
});

export interface RopeOptions {
  /** Position of the first row (tokens already in the cache); not with `positions`. */
  readonly offset?: number;
  /**
   * The position of each batch entry's first row, B of them (sequences at their own places, decoded together), in
   * place of `offset`.
   */
  readonly positions?: readonly number[];
  /** Base of the rotation frequencies theta^(-2i/headDim), 10000 when absent; not with `inverseFrequencies`. */
  readonly theta?: number;
  /** The headDim / 2 inverse frequencies of the pairs (a scaled RoPE's table), in place of `theta`. */
  readonly inverseFrequencies?: readonly number[];
  /** Factor on cos and sin, so on the rotated vector (YaRN's attention factor); 1 when absent. */
  readonly scale?: number;
}

/**
 * Rotary position embedding of x [B, T, H, headDim], rotating pairs (2i, 2i+1) by (offset + t) times each
 * pair's inverse frequency (theta^(-2i/headDim), or the given table) and scaling them by `scale`; with
 * `positions`, batch entry b starts at positions[b] instead of `offset`.
 */
export function rope(x: Tensor, options: RopeOptions = {}): Tensor {
  const scale = options.scale ?? 1;
  assertDType('rope', x.dtype, ['f32']);
  if (x.rank !== 4 || x.shape[3] % 2 !== 0) {
    throw new Error(
      `rope: expected x of shape [B, T, H, headDim] with an even headDim, got ${showShape(x.shape)}`,
    );
  }
  if (!Number.isFinite(scale)) throw new Error(`rope: scale must be a finite number, got ${scale}`);
  return runFused(ropeOp, [x], [offsetsOf(options, x.shape[0]), frequenciesOf(options, x.shape[3]), scale]);
}

/** The position of each of the `batch` entries' first rows: `positions`, checked, else `offset` (0) for all. */
function offsetsOf(options: RopeOptions, batch: number): readonly number[] {
  const { positions } = options;
  if (positions === undefined) {
    const offset = options.offset ?? 0;
    if (!Number.isInteger(offset) || offset < 0)
      throw new Error(`rope: offset must be a non-negative integer, got ${offset}`);
    return new Array<number>(batch).fill(offset);
  }
  if (options.offset !== undefined)
    throw new Error("rope: give offset or positions, not both (positions holds each batch entry's offset)");
  if (positions.length !== batch) {
    throw new Error(
      `rope: positions holds ${positions.length} values; expected ${batch}, one per batch entry of x`,
    );
  }
  const bad = positions.findIndex((p) => !Number.isInteger(p) || p < 0);
  if (bad >= 0)
    throw new Error(`rope: positions[${bad}] is ${positions[bad]}; expected a non-negative integer`);
  return positions;
}

/** The table `rope` rotates by: the given one, checked, else theta's. */
function frequenciesOf(options: RopeOptions, headDim: number): readonly number[] {
  const given = options.inverseFrequencies;
  if (given === undefined) {
    const theta = options.theta ?? 10000;
    if (!(theta > 0 && Number.isFinite(theta)))
      throw new Error(`rope: theta must be a positive number, got ${theta}`);
    return ropeInverseFrequencies(headDim, theta);
  }
  if (options.theta !== undefined)
    throw new Error('rope: give theta or inverseFrequencies, not both (the table already holds the theta)');
  if (given.length !== headDim / 2) {
    throw new Error(
      `rope: inverseFrequencies holds ${given.length} values; expected headDim / 2 = ${headDim / 2}, one per pair`,
    );
  }
  const bad = given.findIndex((f) => !Number.isFinite(f));
  if (bad >= 0)
    throw new Error(`rope: inverseFrequencies[${bad}] is ${given[bad]}; expected a finite number`);
  return given;
}
