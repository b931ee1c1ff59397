import {
  broadcastTo,
  clone,
  concat,
  permute,
  reshape,
  slice,
  type Tensor,
  transpose,
  writeSlice,
} from '@loom/tensor';
import type { OpGroup } from '../case';
import { EXACT } from '../tolerance';

export const movementGroups: OpGroup[] = [
  {
    op: 'reshape',
    cases: [
      {
        name: 'reshape [6, 5] -> [3, -1]',
        inputs: [{ shape: [6, 5] }],
        run: ([x]) => reshape(x, [3, -1]),
        tol: EXACT,
      },
      { name: 'reshape [1] -> []', inputs: [{ shape: [1] }], run: ([x]) => reshape(x, []), tol: EXACT },
    ],
  },
  {
    op: 'permute',
    cases: [
      [
        [3, 5],
        [1, 0],
      ],
      [
        [2, 3, 4],
        [2, 0, 1],
      ],
      [
        [2, 3, 4, 5],
        [0, 2, 1, 3],
      ],
      [
        [2, 3, 4, 5],
        [3, 2, 1, 0],
      ],
      [
        [1, 65, 1, 7],
        [1, 3, 0, 2],
      ],
      [
        [64, 257],
        [1, 0],
      ],
    ].map(([shape, perm]) => ({
      name: `permute [${shape.join(', ')}] by [${perm.join(', ')}]`,
      inputs: [{ shape }],
      run: ([x]: Tensor[]) => permute(x, perm),
      tol: EXACT,
    })),
  },
  {
    op: 'transpose',
    cases: [
      {
        name: 'transpose last two axes of [2, 33, 65]',
        inputs: [{ shape: [2, 33, 65] }],
        run: ([x]) => transpose(x),
        tol: EXACT,
      },
    ],
  },
  {
    op: 'slice',
    cases: [
      { shape: [10], starts: [3], sizes: [4] },
      { shape: [5, 7], starts: [1, 2], sizes: [3, 5] },
      { shape: [4, 5, 6], starts: [0, 4, 1], sizes: [4, 1, 5] },
      { shape: [2, 300, 3], starts: [1, 10], sizes: [1, -1] },
      { shape: [3, 4], starts: [3, 0], sizes: [0, 4] },
    ].map(({ shape, starts, sizes }) => ({
      name: `slice [${shape.join(', ')}] from [${starts.join(', ')}] size [${sizes.join(', ')}]`,
      inputs: [{ shape }],
      run: ([x]: Tensor[]) => slice(x, starts, sizes),
      tol: EXACT,
    })),
  },
  {
    op: 'concat',
    cases: [
      {
        name: 'concat [2, 3] and [4, 3] on axis 0',
        inputs: [{ shape: [2, 3] }, { shape: [4, 3] }],
        run: (xs) => concat(xs, 0),
        tol: EXACT,
      },
      {
        name: 'concat three tensors on the last axis',
        inputs: [{ shape: [2, 5, 1] }, { shape: [2, 5, 7] }, { shape: [2, 5, 64] }],
        run: (xs) => concat(xs, -1),
        tol: EXACT,
      },
      {
        name: 'concat i32 on a middle axis',
        inputs: [
          { shape: [3, 2, 4], dist: { kind: 'ints', low: -9, high: 9 } },
          { shape: [3, 5, 4], dist: { kind: 'ints', low: -9, high: 9 } },
        ],
        run: (xs) => concat(xs, 1),
        tol: EXACT,
      },
    ],
  },
  {
    op: 'writeSlice',
    cases: [
      { dst: [10], src: [3], starts: [7] },
      { dst: [1, 16, 2, 8], src: [1, 1, 2, 8], starts: [0, 5, 0, 0] },
      { dst: [2, 64, 4, 16], src: [2, 13, 4, 16], starts: [0, 51, 0, 0] },
      { dst: [5, 7], src: [2, 3], starts: [3, 4] },
    ].map(({ dst, src, starts }) => ({
      name: `writeSlice [${src.join(', ')}] into [${dst.join(', ')}] at [${starts.join(', ')}]`,
      inputs: [{ shape: dst }, { shape: src }],
      run: ([d, s]: Tensor[]) => {
        const out = clone(d);
        writeSlice(out, s, starts);
        return out;
      },
      tol: EXACT,
    })),
  },
  {
    op: 'broadcastTo',
    cases: [
      {
        name: 'broadcastTo [3, 1] -> [2, 3, 65]',
        inputs: [{ shape: [3, 1] }],
        run: ([x]) => broadcastTo(x, [2, 3, 65]),
        tol: EXACT,
      },
    ],
  },
];
