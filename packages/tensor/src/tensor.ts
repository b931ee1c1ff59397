import type { Backend, DataId, TensorInfo } from './backend';
import type { DType, HostArray } from './dtype';
import type { Shape } from './shape';

/** Operand accepted where a tensor is expected: a number becomes a scalar of the other operand's dtype. */
export type Operand = Tensor | number;

/** Options of `matmul`. */
export interface MatmulOptions {
  /** Use a's last two axes transposed: a is [..., k, m]. */
  readonly transA?: boolean;
  /** Use b's last two axes transposed: b is [..., n, k] (e.g. a weight stored [out, in]). */
  readonly transB?: boolean;
}

/**
 * An n-dimensional array on a backend. Ops enqueue work and return new tensors at once;
 * `data()` waits for the values. Free a tensor with `dispose()` or create it inside `scope()`.
 *
 * This is the type every op is written against; the class that implements it (stored-tensor.ts)
 * calls the op functions from its methods, so it sits above them and they never import it.
 */
export interface Tensor {
  readonly shape: Shape;
  readonly dtype: DType;
  readonly backend: Backend;
  readonly rank: number;
  /** Number of elements. */
  readonly size: number;
  /** Bytes the elements take on the backend. */
  readonly bytes: number;
  readonly isDisposed: boolean;

  /** The kernel view of this tensor; throws, naming `op`, if it was disposed. */
  info(op: string): TensorInfo;
  /** A tensor of another shape with the same elements, sharing storage (no copy). */
  view(shape: Shape): Tensor;
  /** A new tensor owning `id`, storage just made by this tensor's backend: how an op wraps its output. */
  adopt(id: DataId, shape: Shape, dtype: DType): Tensor;
  /** Frees this tensor; storage is released when no view uses it. Disposing twice is harmless. */
  dispose(): void;

  /** Reads the values back to the host (row-major). */
  data(): Promise<HostArray>;
  /**
   * Reads an f32 tensor's values as a Float32Array (a float64 backend's values rounded once);
   * throws for other dtypes.
   */
  float32Data(): Promise<Float32Array>;
  /** Reads the values as a plain number array. */
  array(): Promise<number[]>;
  /** Reads a single-element tensor as a number. */
  item(): Promise<number>;
  toString(): string;

  // The op functions of the same names, as methods.
  add(b: Operand): Tensor;
  sub(b: Operand): Tensor;
  mul(b: Operand): Tensor;
  div(b: Operand): Tensor;
  pow(b: Operand): Tensor;
  maximum(b: Operand): Tensor;
  minimum(b: Operand): Tensor;
  eq(b: Operand): Tensor;
  ne(b: Operand): Tensor;
  lt(b: Operand): Tensor;
  le(b: Operand): Tensor;
  gt(b: Operand): Tensor;
  ge(b: Operand): Tensor;
  neg(): Tensor;
  exp(): Tensor;
  log(): Tensor;
  sqrt(): Tensor;
  rsqrt(): Tensor;
  recip(): Tensor;
  abs(): Tensor;
  tanh(): Tensor;
  sigmoid(): Tensor;
  silu(): Tensor;
  gelu(): Tensor;
  relu(): Tensor;
  sin(): Tensor;
  cos(): Tensor;
  cast(dtype: DType): Tensor;
  sum(axes?: number | readonly number[], keepDims?: boolean): Tensor;
  max(axes?: number | readonly number[], keepDims?: boolean): Tensor;
  mean(axes?: number | readonly number[], keepDims?: boolean): Tensor;
  argmax(axis?: number, keepDims?: boolean): Tensor;
  softmax(axis?: number): Tensor;
  logSoftmax(axis?: number): Tensor;
  matmul(b: Tensor, options?: MatmulOptions): Tensor;
  reshape(shape: readonly number[]): Tensor;
  permute(perm: readonly number[]): Tensor;
  transpose(axis1?: number, axis2?: number): Tensor;
  slice(starts: readonly number[], sizes: readonly number[]): Tensor;
  clone(): Tensor;
  gather(ids: Tensor): Tensor;
}
