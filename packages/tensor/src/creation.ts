import type { Backend } from './backend';
import type { DType, HostArray } from './dtype';
import { getBackend } from './registry';
import { assertValidShape, type Shape, showShape, sizeOf } from './shape';
import { tensorFromStorage } from './stored-tensor';
import type { Tensor } from './tensor';

/** Nested arrays of numbers, as written in code: [[1, 2], [3, 4]]. */
export type NestedNumbers = number | readonly NestedNumbers[];

export interface CreateOptions {
  readonly dtype?: DType;
  /** Backend to create on; defaults to the one set with setBackend(). */
  readonly backend?: Backend;
}

function inferShape(values: NestedNumbers): number[] {
  const shape: number[] = [];
  let v: NestedNumbers = values;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0] ?? 0;
  }
  return shape;
}

function flatten(values: NestedNumbers, shape: Shape, depth: number, out: number[]): void {
  if (depth === shape.length) {
    if (typeof values !== 'number')
      throw new Error('tensor: nested array is deeper than its first element suggests');
    out.push(values);
    return;
  }
  if (!Array.isArray(values) || values.length !== shape[depth]) {
    throw new Error(
      `tensor: ragged nested array; every row at depth ${depth} must have ${shape[depth]} entries`,
    );
  }
  for (const v of values) flatten(v, shape, depth + 1, out);
}

/**
 * A tensor from values: a typed array or flat number array with a shape, or nested arrays
 * (shape inferred). The dtype is `options.dtype`, else i32 for an Int32Array, else f32. f32
 * values reach the backend unrounded (a Float64Array stays one, numbers become one), so a
 * float64 backend keeps every bit and a float32 backend rounds them once, on upload.
 */
export function tensor(
  values: NestedNumbers | HostArray,
  shape?: Shape,
  options: CreateOptions = {},
): Tensor {
  const backend = options.backend ?? getBackend();
  let flat: ArrayLike<number>;
  let resolved: Shape;
  if (values instanceof Float32Array || values instanceof Float64Array || values instanceof Int32Array) {
    flat = values;
    resolved = shape ?? [values.length];
  } else {
    const inferred = inferShape(values);
    const list: number[] = [];
    flatten(values, inferred, 0, list);
    flat = list;
    resolved = shape ?? inferred;
  }
  assertValidShape('tensor', resolved);
  if (sizeOf(resolved) !== flat.length) {
    throw new Error(
      `tensor: ${flat.length} values do not fill shape ${showShape(resolved)} (${sizeOf(resolved)} elements)`,
    );
  }
  const dtype = options.dtype ?? (values instanceof Int32Array ? 'i32' : 'f32');
  return tensorFromStorage(backend, backend.upload(hostValues(flat, dtype)), resolved, dtype);
}

/**
 * The values as the host array `upload` takes for `dtype`, f32 ones unrounded: a typed array of the right kind as it
 * is (`upload` copies it), anything else converted.
 */
function hostValues(flat: ArrayLike<number>, dtype: DType): HostArray {
  if (dtype === 'i32') return flat instanceof Int32Array ? flat : Int32Array.from(flat);
  return flat instanceof Float32Array || flat instanceof Float64Array ? flat : Float64Array.from(flat);
}

/** A tensor of `shape` with every element `value`. */
export function full(shape: Shape, value: number, options: CreateOptions = {}): Tensor {
  assertValidShape('full', shape);
  const backend = options.backend ?? getBackend();
  const dtype = options.dtype ?? 'f32';
  return tensorFromStorage(backend, backend.fill(sizeOf(shape), value, dtype), shape, dtype);
}

export const zeros = (shape: Shape, options: CreateOptions = {}) => full(shape, 0, options);

/**
 * A tensor whose values are unspecified (zeros on a backend without `alloc`): the output of an in-place op that
 * writes all of it, such as `attentionStep`'s, without a fill first (on WebGPU, a dispatch).
 */
export function empty(shape: Shape, options: CreateOptions = {}): Tensor {
  assertValidShape('empty', shape);
  const backend = options.backend ?? getBackend();
  const dtype = options.dtype ?? 'f32';
  const size = sizeOf(shape);
  const id = backend.alloc ? backend.alloc(size, dtype) : backend.fill(size, 0, dtype);
  return tensorFromStorage(backend, id, shape, dtype);
}
export const ones = (shape: Shape, options: CreateOptions = {}) => full(shape, 1, options);

/** [start, start + step, ...) with `size` elements. */
export function arange(size: number, start = 0, step = 1, options: CreateOptions = {}): Tensor {
  assertValidShape('arange', [size]);
  const backend = options.backend ?? getBackend();
  const dtype = options.dtype ?? 'f32';
  return tensorFromStorage(backend, backend.arange(size, start, step, dtype), [size], dtype);
}

export interface RandomOptions {
  readonly seed: number;
  readonly backend?: Backend;
}

/** Seeded uniform values in (0, 1), identical on every backend for the same seed. */
export function rand(shape: Shape, options: RandomOptions): Tensor {
  assertValidShape('rand', shape);
  const backend = options.backend ?? getBackend();
  return tensorFromStorage(backend, backend.random('uniform', sizeOf(shape), options.seed), shape, 'f32');
}

/** Seeded standard normal values, identical (to float rounding) on every backend for the same seed. */
export function randn(shape: Shape, options: RandomOptions): Tensor {
  assertValidShape('randn', shape);
  const backend = options.backend ?? getBackend();
  return tensorFromStorage(backend, backend.random('normal', sizeOf(shape), options.seed), shape, 'f32');
}

/** Copies a tensor to another backend (reads it back, then uploads). */
export async function toBackend(x: Tensor, backend: Backend): Promise<Tensor> {
  const values = await x.data();
  return tensorFromStorage(backend, backend.upload(values), x.shape, x.dtype);
}
