import { argmax, max, mean, sum, type Tensor } from '@loom/tensor';
import type { OpCase, OpGroup } from '../case';
import { EXACT, REDUCTION } from '../tolerance';

type Axes = readonly number[] | undefined;

const layouts: readonly (readonly [readonly number[], Axes])[] = [
  [[1], undefined],
  [[1000], undefined],
  [[65_537], undefined],
  [[7, 65], [1]],
  [[7, 65], [0]],
  [[3, 5, 7], [1]],
  [
    [3, 5, 7],
    [0, 2],
  ],
  [
    [3, 5, 7],
    [1, 2],
  ],
  [
    [2, 3, 4, 5],
    [0, 1, 3],
  ],
  [[4, 32_000], [1]],
  [[300, 257], [0]],
];

function reduceCases(name: string, fn: (x: Tensor, axes: Axes, keep: boolean) => Tensor): OpCase[] {
  return layouts.map(([shape, axes], i) => ({
    name: `${name} [${shape.join(', ')}] over ${axes ? `[${axes.join(', ')}]` : 'all axes'}`,
    inputs: [{ shape }],
    run: ([x]: Tensor[]) => fn(x, axes, i % 2 === 0),
    tol: REDUCTION,
  }));
}

export const reduceGroups: OpGroup[] = [
  {
    op: 'sum',
    cases: [
      ...reduceCases('sum', (x, axes, keep) => sum(x, axes, keep)),
      {
        name: 'sum i32 [5, 300] over [1]',
        inputs: [{ shape: [5, 300], dist: { kind: 'ints', low: -100, high: 100 } }],
        run: ([x]) => sum(x, 1),
        tol: EXACT,
      },
      {
        name: 'sum of many positive values keeps its accuracy',
        inputs: [{ shape: [200_003], dist: { kind: 'positive' } }],
        run: ([x]) => sum(x),
        tol: { atol: 0, rtol: 2e-6 },
      },
    ],
  },
  {
    op: 'max',
    cases: [
      ...reduceCases('max', (x, axes, keep) => max(x, axes, keep)),
      {
        name: 'max i32 [300, 7] over [0]',
        inputs: [{ shape: [300, 7], dist: { kind: 'ints', low: -1000, high: 1000 } }],
        run: ([x]) => max(x, 0),
        tol: EXACT,
      },
    ],
  },
  { op: 'mean', cases: reduceCases('mean', (x, axes, keep) => mean(x, axes, keep)) },
  {
    op: 'argmax',
    cases: [
      ...[
        [[1], 0],
        [[1000], 0],
        [[4, 32_000], 1],
        [[7, 65], 0],
        [[3, 5, 7], 1],
        [[65_537], 0],
      ].map(([shape, axis]) => ({
        name: `argmax [${(shape as number[]).join(', ')}] along ${axis}`,
        inputs: [{ shape: shape as number[] }],
        run: ([x]: Tensor[]) => argmax(x, axis as number),
        tol: EXACT,
      })),
      {
        name: 'argmax picks the first of equal maxima',
        inputs: [{ shape: [9, 33], dtype: 'f32', dist: { kind: 'ints', low: 0, high: 2 } }],
        run: ([x]: Tensor[]) => argmax(x, 1),
        tol: EXACT,
      },
    ],
  },
];
