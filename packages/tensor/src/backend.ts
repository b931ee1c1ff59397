import type { DType, HostArray } from './dtype';
import type { BinaryOp, CompareOp, RandomKind, ReduceOp, UnaryOp } from './primitive-ops';
import type { Shape } from './shape';

/**
 * Opaque handle to storage owned by one backend. Backends create these and map them to
 * their buffers; the front-end never looks inside.
 */
export interface DataId {
  /** Name of the backend that owns the storage. */
  readonly backend: string;
}

/** A view the front-end passes to kernels: storage plus its row-major shape and dtype. */
export interface TensorInfo {
  readonly id: DataId;
  readonly shape: Shape;
  readonly dtype: DType;
}

/**
 * Reduction geometry: the input is viewed as [outer, size, inner] and reduced over the
 * middle dimension, giving [outer, inner].
 */
export interface ReduceDims {
  readonly outer: number;
  readonly size: number;
  readonly inner: number;
}

/**
 * Batched matrix product. A is [batch, m, k] ([batch, k, m] when `transA`), B is
 * [batch, k, n] ([batch, n, k] when `transB`); the result is [batch, m, n]. A batch
 * stride of 0 reuses one matrix for every batch entry (broadcasting).
 */
export interface MatmulSpec {
  readonly batch: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly transA: boolean;
  readonly transB: boolean;
  readonly aBatchStride: number;
  readonly bBatchStride: number;
}

/**
 * The kernel of every fused op, by op name: its tensor inputs as TensorInfo, then its parameters; it returns
 * new storage (nothing for an in-place op). Declared empty here and filled in by the op table
 * (`ops/table.ts`), one member per op, through declaration merging: the ops sit above this module (they use
 * tensors, which use backends), so the table extends this interface rather than this module importing it.
 * A backend supplies `Partial<FusedKernels>`; a missing kernel falls back to the op's composite.
 */
// biome-ignore lint/suspicious/noEmptyInterface: ops/table.ts adds one member per op by declaration merging.
export interface FusedKernels {}

/**
 * A compute backend: a short list of primitive kernels plus optional fused ones.
 * Every kernel enqueues work synchronously and returns new storage; only `read` is async.
 * Kernels receive contiguous row-major inputs whose shapes the front-end has validated.
 */
export interface Backend {
  readonly name: string;
  readonly fused: Partial<FusedKernels>;

  /**
   * Copies host values into new storage; the dtype follows the array type (Int32Array is
   * i32; Float32Array and Float64Array are both f32). A backend stores f32 values at its own
   * precision: a float32 backend rounds a Float64Array, a float64 backend keeps every bit.
   */
  upload(values: HostArray): DataId;
  /**
   * Reads storage back to the host once all queued work that writes it is done: an Int32Array
   * for i32; for f32 a Float32Array, or a Float64Array on a backend that stores floats in float64.
   */
  read(x: TensorInfo): Promise<HostArray>;
  /** Frees storage (possibly deferred until in-flight work finishes). */
  release(id: DataId): void;
  /** Number of live storages. */
  liveCount(): number;
  /** Bytes held by live storages. */
  liveBytes(): number;
  /** Submits queued work now (a no-op for backends that run eagerly). */
  flush(): void;

  unary(op: UnaryOp, x: TensorInfo): DataId;
  /** Same dtypes; each input is broadcast to `outShape`. */
  binary(op: BinaryOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId;
  /** i32 mask of 0/1; inputs broadcast to `outShape`. */
  compare(op: CompareOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId;
  /** cond (any dtype, nonzero is true) ? a : b, all broadcast to `outShape`. */
  where(cond: TensorInfo, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId;
  reduce(op: ReduceOp, x: TensorInfo, dims: ReduceDims): DataId;
  /** Index (i32) of the first maximum along the middle dimension. */
  argmax(x: TensorInfo, dims: ReduceDims): DataId;
  matmul(a: TensorInfo, b: TensorInfo, spec: MatmulSpec): DataId;
  /** Copies x with axes reordered: out.shape[i] = x.shape[perm[i]]. */
  permute(x: TensorInfo, perm: readonly number[]): DataId;
  /** Copies the box starting at `starts` with extents `sizes`. */
  slice(x: TensorInfo, starts: readonly number[], sizes: readonly number[]): DataId;
  /** Writes src into dst (in place) at `starts`; src fits inside dst. */
  writeSlice(dst: TensorInfo, src: TensorInfo, starts: readonly number[]): void;
  /** Rows of table [rows, ...rest] picked by i32 ids of any shape; out-of-range ids give zeros. */
  gather(table: TensorInfo, ids: TensorInfo): DataId;
  /** out [numRows, ...rest] = 0, then out[ids[i]] += src[i]; out-of-range ids are skipped. */
  scatterAdd(src: TensorInfo, ids: TensorInfo, numRows: number): DataId;
  /** f32 to i32 truncates toward zero. */
  cast(x: TensorInfo, to: DType): DataId;
  fill(size: number, value: number, dtype: DType): DataId;
  /**
   * New storage whose values are unspecified until an op writes them (`empty`), for an output an in-place op
   * overwrites whole; a backend without it gets zeros from `fill`.
   */
  alloc?(size: number, dtype: DType): DataId;
  /** start + i * step for i in [0, size). */
  arange(size: number, start: number, step: number, dtype: DType): DataId;
  /** Counter-based seeded random f32 values, the same on every backend (see random.ts). */
  random(kind: RandomKind, size: number, seed: number): DataId;
}
