import type { Backend, DataId, TensorInfo } from './backend';
import { bytesPerElement, type DType, type HostArray } from './dtype';
import * as el from './elementwise';
import * as ix from './indexing';
import * as mm from './matmul';
import * as mv from './movement';
import { logSoftmax } from './ops/log-softmax';
import { softmax } from './ops/softmax';
import * as rd from './reduce';
import { track } from './scope';
import { type Shape, showShape, sizeOf } from './shape';
import type { MatmulOptions, Operand, Tensor } from './tensor';

/**
 * Reference-counted backend storage, shared by a tensor and its reshaped views. Borrowed
 * storage belongs to someone else and is never released through its tensors.
 */
class Storage {
  refs = 1;
  constructor(
    readonly backend: Backend,
    readonly id: DataId,
    readonly owned: boolean,
  ) {}
}

/**
 * The one implementation of `Tensor` (tensor.ts): a view of reference-counted backend storage, whose op
 * methods call the op functions. Those are written against the interface and make their outputs with
 * `adopt`, so this class sits above them and none of them imports it.
 */
class StoredTensor implements Tensor {
  readonly #storage: Storage;
  #disposed = false;

  constructor(
    storage: Storage,
    readonly shape: Shape,
    readonly dtype: DType,
  ) {
    this.#storage = storage;
    track(this);
  }

  get backend(): Backend {
    return this.#storage.backend;
  }

  get rank(): number {
    return this.shape.length;
  }

  get size(): number {
    return sizeOf(this.shape);
  }

  get bytes(): number {
    return this.size * bytesPerElement(this.dtype);
  }

  get isDisposed(): boolean {
    return this.#disposed;
  }

  info(op: string): TensorInfo {
    if (this.#disposed) {
      throw new Error(
        `${op}: the ${this.dtype} tensor of shape ${showShape(this.shape)} was disposed and cannot be used; ` +
          'return it from scope() or keep() it to use it later',
      );
    }
    return { id: this.#storage.id, shape: this.shape, dtype: this.dtype };
  }

  view(shape: Shape): Tensor {
    this.info('reshape');
    this.#storage.refs++;
    return new StoredTensor(this.#storage, shape, this.dtype);
  }

  adopt(id: DataId, shape: Shape, dtype: DType): Tensor {
    return tensorFromStorage(this.backend, id, shape, dtype);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    if (--this.#storage.refs === 0 && this.#storage.owned) this.#storage.backend.release(this.#storage.id);
  }

  async data(): Promise<HostArray> {
    return this.backend.read(this.info('data'));
  }

  async float32Data(): Promise<Float32Array> {
    if (this.dtype !== 'f32') {
      throw new Error(
        `float32Data: expected an f32 tensor, got ${this.dtype}; cast it with .cast('f32') first`,
      );
    }
    const values = await this.data();
    return values instanceof Float32Array ? values : Float32Array.from(values);
  }

  async array(): Promise<number[]> {
    return Array.from(await this.data());
  }

  async item(): Promise<number> {
    if (this.size !== 1)
      throw new Error(`item: expected a tensor of one element, got shape ${showShape(this.shape)}`);
    return (await this.data())[0];
  }

  toString(): string {
    return `Tensor(${this.dtype}, ${showShape(this.shape)}, ${this.backend.name})`;
  }

  add(b: Operand): Tensor {
    return el.add(this, b);
  }
  sub(b: Operand): Tensor {
    return el.sub(this, b);
  }
  mul(b: Operand): Tensor {
    return el.mul(this, b);
  }
  div(b: Operand): Tensor {
    return el.div(this, b);
  }
  pow(b: Operand): Tensor {
    return el.pow(this, b);
  }
  maximum(b: Operand): Tensor {
    return el.maximum(this, b);
  }
  minimum(b: Operand): Tensor {
    return el.minimum(this, b);
  }
  eq(b: Operand): Tensor {
    return el.eq(this, b);
  }
  ne(b: Operand): Tensor {
    return el.ne(this, b);
  }
  lt(b: Operand): Tensor {
    return el.lt(this, b);
  }
  le(b: Operand): Tensor {
    return el.le(this, b);
  }
  gt(b: Operand): Tensor {
    return el.gt(this, b);
  }
  ge(b: Operand): Tensor {
    return el.ge(this, b);
  }
  neg(): Tensor {
    return el.neg(this);
  }
  exp(): Tensor {
    return el.exp(this);
  }
  log(): Tensor {
    return el.log(this);
  }
  sqrt(): Tensor {
    return el.sqrt(this);
  }
  rsqrt(): Tensor {
    return el.rsqrt(this);
  }
  recip(): Tensor {
    return el.recip(this);
  }
  abs(): Tensor {
    return el.abs(this);
  }
  tanh(): Tensor {
    return el.tanh(this);
  }
  sigmoid(): Tensor {
    return el.sigmoid(this);
  }
  silu(): Tensor {
    return el.silu(this);
  }
  gelu(): Tensor {
    return el.gelu(this);
  }
  relu(): Tensor {
    return el.relu(this);
  }
  sin(): Tensor {
    return el.sin(this);
  }
  cos(): Tensor {
    return el.cos(this);
  }
  cast(dtype: DType): Tensor {
    return el.cast(this, dtype);
  }
  sum(axes?: number | readonly number[], keepDims = false): Tensor {
    return rd.sum(this, axes, keepDims);
  }
  max(axes?: number | readonly number[], keepDims = false): Tensor {
    return rd.max(this, axes, keepDims);
  }
  mean(axes?: number | readonly number[], keepDims = false): Tensor {
    return rd.mean(this, axes, keepDims);
  }
  argmax(axis = -1, keepDims = false): Tensor {
    return rd.argmax(this, axis, keepDims);
  }
  softmax(axis = -1): Tensor {
    return softmax(this, axis);
  }
  logSoftmax(axis = -1): Tensor {
    return logSoftmax(this, axis);
  }
  matmul(b: Tensor, options?: MatmulOptions): Tensor {
    return mm.matmul(this, b, options);
  }
  reshape(shape: readonly number[]): Tensor {
    return mv.reshape(this, shape);
  }
  permute(perm: readonly number[]): Tensor {
    return mv.permute(this, perm);
  }
  transpose(axis1 = -2, axis2 = -1): Tensor {
    return mv.transpose(this, axis1, axis2);
  }
  slice(starts: readonly number[], sizes: readonly number[]): Tensor {
    return mv.slice(this, starts, sizes);
  }
  clone(): Tensor {
    return mv.clone(this);
  }
  gather(ids: Tensor): Tensor {
    return ix.gather(this, ids);
  }
}

/** Wraps fresh storage from `backend` as a tensor that owns it; use the creation functions rather than this. */
export function tensorFromStorage(backend: Backend, id: DataId, shape: Shape, dtype: DType): Tensor {
  return new StoredTensor(new Storage(backend, id, true), shape, dtype);
}

/**
 * A tensor over storage it does not own (disposing it never releases the storage); for code that layers
 * over a backend, such as autograd, to run ops on storage it tracks.
 */
export function borrowTensor(backend: Backend, info: TensorInfo): Tensor {
  return new StoredTensor(new Storage(backend, info.id, false), info.shape, info.dtype);
}
