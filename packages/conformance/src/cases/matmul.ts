import { matmul, type Tensor } from '@loom/tensor';
import type { OpGroup } from '../case';
import { matmulTolerance } from '../tolerance';

interface MatmulShape {
  readonly a: readonly number[];
  readonly b: readonly number[];
  readonly transA?: boolean;
  readonly transB?: boolean;
}

const shapes: readonly MatmulShape[] = [
  { a: [1, 1], b: [1, 1] },
  { a: [3, 5], b: [5, 7] },
  { a: [17, 33], b: [33, 65] },
  { a: [64, 64], b: [64, 64] },
  { a: [65, 129], b: [129, 31] },
  { a: [129, 67], b: [67, 257] },
  { a: [256, 256], b: [256, 256] },
  { a: [1, 288], b: [288, 768] },
  { a: [1, 288], b: [768, 288], transB: true },
  { a: [1, 288], b: [32_000, 288], transB: true },
  // One row against 37 outputs of 45: the matrix-vector kernel's parts of W, the row left over, k's scalar tail.
  { a: [1, 45], b: [37, 45], transB: true },
  { a: [3, 5], b: [7, 5], transB: true },
  { a: [5, 3], b: [5, 7], transA: true },
  { a: [33, 17], b: [65, 33], transA: true, transB: true },
  { a: [2, 3, 17, 9], b: [2, 3, 9, 5] },
  { a: [2, 1, 7, 9], b: [1, 3, 9, 5] },
  { a: [4, 7, 9], b: [9, 5] },
  { a: [7, 9], b: [4, 9, 5] },
  { a: [6, 64, 32], b: [6, 64, 32], transB: true },
  { a: [12, 64, 64], b: [12, 64, 32] },
  // Few rows (a batched decode step: one row per sequence) times a weight stored [out, in].
  { a: [2, 37], b: [41, 37], transB: true },
  { a: [5, 288], b: [1001, 288], transB: true },
  { a: [8, 288], b: [768, 288], transB: true },
  { a: [16, 35], b: [67, 35], transB: true },
  { a: [3, 4, 29], b: [3, 19, 29], transB: true },
  { a: [2, 13, 30], b: [30, 9] },
  { a: [7, 21], b: [21, 43] },
];

export const matmulGroup: OpGroup = {
  op: 'matmul',
  cases: shapes.map(({ a, b, transA = false, transB = false }) => {
    const k = transA ? a[a.length - 2] : a[a.length - 1];
    return {
      name: `matmul [${a.join(', ')}]${transA ? 'ᵀ' : ''} x [${b.join(', ')}]${transB ? 'ᵀ' : ''}`,
      inputs: [{ shape: a }, { shape: b }],
      run: ([x, y]: Tensor[]) => matmul(x, y, { transA, transB }),
      tol: matmulTolerance(k),
    };
  }),
};
