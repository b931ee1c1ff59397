/** Elementwise math on one tensor. `neg` and `abs` also accept i32; the rest need f32. */
export type UnaryOp =
  | 'neg'
  | 'exp'
  | 'log'
  | 'sqrt'
  | 'rsqrt'
  | 'recip'
  | 'abs'
  | 'tanh'
  | 'sigmoid'
  | 'silu'
  | 'gelu'
  | 'relu'
  | 'sin'
  | 'cos';

/** Elementwise arithmetic on two broadcast tensors of the same dtype (`pow` needs f32). */
export type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'pow' | 'max' | 'min';

/** Elementwise comparisons; the result is an i32 mask of 0 and 1. */
export type CompareOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** Reductions a backend implements; `mean` is composed from `sum`. */
export type ReduceOp = 'sum' | 'max';

/** Distributions of the seeded random generator. */
export type RandomKind = 'uniform' | 'normal';

export const unaryOps: readonly UnaryOp[] = [
  'neg',
  'exp',
  'log',
  'sqrt',
  'rsqrt',
  'recip',
  'abs',
  'tanh',
  'sigmoid',
  'silu',
  'gelu',
  'relu',
  'sin',
  'cos',
];
export const binaryOps: readonly BinaryOp[] = ['add', 'sub', 'mul', 'div', 'pow', 'max', 'min'];
export const compareOps: readonly CompareOp[] = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];
