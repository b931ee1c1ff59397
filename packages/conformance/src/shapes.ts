/**
 * Sizes that exercise kernels: 1, odd, around common workgroup sizes (64, 256), and large.
 */
export const VECTOR_SIZES: readonly number[] = [1, 7, 63, 64, 65, 255, 256, 257, 1000, 4099, 65_537];

/** Multi-axis shapes for elementwise and movement ops. */
export const TENSOR_SHAPES: readonly (readonly number[])[] = [
  [],
  [1],
  [3, 5],
  [2, 3, 7],
  [4, 1, 65],
  [2, 2, 3, 33],
];

/** Pairs of shapes that broadcast together. */
export const BROADCAST_PAIRS: readonly (readonly [readonly number[], readonly number[]])[] = [
  [
    [3, 4],
    [3, 4],
  ],
  [[3, 4], []],
  [[], [5]],
  [
    [3, 1],
    [1, 4],
  ],
  [[2, 3, 4], [4]],
  [
    [2, 1, 4],
    [3, 1],
  ],
  [[257], [1]],
  [
    [5, 1, 7],
    [1, 6, 1],
  ],
];
