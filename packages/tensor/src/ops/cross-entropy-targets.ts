import { arange } from '../creation';
import { cast, compare, ne } from '../elementwise';
import type { Tensor } from '../tensor';
import { casesOver, type FusedCases, type InputSpec, REDUCTION, shapeLabel } from './case';

/** f32 [N, V] with 1 at each row's target and 0 elsewhere (all 0 for a target outside [0, V)). */
export function oneHot(targets: Tensor, v: number): Tensor {
  const n = targets.shape[0];
  const vocab = arange(v, 0, 1, { backend: targets.backend, dtype: 'i32' }).reshape([1, v]); // [1, V]
  return cast(compare('eq', vocab, targets.reshape([n, 1])), 'f32'); // [N, V]
}

/** f32 [N], 1 for the rows whose target is not `ignoreIndex`. */
export function validRows(targets: Tensor, ignoreIndex: number): Tensor {
  return cast(ne(targets, ignoreIndex), 'f32'); // [N]
}

/** N rows of V logits, the ignored index, and whether some targets fall outside [0, V). */
interface CrossEntropyShape {
  readonly n: number;
  readonly v: number;
  readonly ignore: number;
  readonly outOfRange: boolean;
}

/** The cross-entropy ops' conformance shapes: N rows of V logits, an ignored target, targets outside [0, V). */
const SHAPES: readonly [CrossEntropyShape, ...CrossEntropyShape[]] = [
  { n: 1, v: 1, ignore: -100, outOfRange: false },
  { n: 5, v: 7, ignore: -100, outOfRange: false },
  { n: 12, v: 65, ignore: 3, outOfRange: false },
  { n: 64, v: 512, ignore: -1, outOfRange: false },
  { n: 4, v: 32_000, ignore: -100, outOfRange: false },
  { n: 9, v: 5, ignore: -100, outOfRange: true },
];

/**
 * The cross-entropy ops' cases over those shapes: logits, targets, then `extra` inputs (the backward's incoming
 * gradient); the ignored index is the op's parameter.
 */
export function crossEntropyCases(extra: readonly InputSpec[]): FusedCases<[number]> {
  return casesOver(SHAPES, ({ n, v, ignore, outOfRange }) => ({
    label: `${shapeLabel([n, v])} ignoring ${ignore}${outOfRange ? ' with out-of-range targets' : ''}`,
    inputs: [
      { shape: [n, v], dist: { kind: 'normal', scale: 3 } },
      {
        shape: [n],
        dist: { kind: 'ints', low: ignore === -1 || outOfRange ? -1 : 0, high: outOfRange ? v : v - 1 },
      },
      ...extra,
    ],
    params: [ignore],
    tol: REDUCTION,
  }));
}
