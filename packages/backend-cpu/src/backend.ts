import {
  type Backend,
  type BinaryOp,
  type CompareOp,
  type DataId,
  type DType,
  type FusedKernels,
  type HostArray,
  type MatmulSpec,
  normalAt,
  type RandomKind,
  type ReduceDims,
  type ReduceOp,
  type Shape,
  sizeOf,
  type TensorInfo,
  type UnaryOp,
  uniformAt,
} from '@loom/tensor';
import { unaryVectorInto } from './activation';
import { argmaxRowsInto } from './argmax-rows';
import { binaryKernel, compareKernel, whereKernel } from './binary';
import { sumColumnsInto } from './column-sum';
import { adamwKernels } from './fused/adamw';
import { attentionKernels } from './fused/attention';
import { attentionGradKernels } from './fused/attention-grad';
import { attentionStepKernels } from './fused/attention-step';
import { crossEntropyKernels } from './fused/cross-entropy';
import type { CpuKernelContext } from './fused/kernel-context';
import { normKernels } from './fused/norm';
import { normParamGradKernels } from './fused/norm-param-grad';
import { pointwiseKernels } from './fused/pointwise';
import { productKernels } from './fused/products';
import { ropeKernels } from './fused/rope';
import { selectiveScanKernels } from './fused/selective-scan';
import { softmaxKernels } from './fused/softmax';
import { sumSquaresKernels } from './fused/sum-squares';
import { weightRowsKernels } from './fused/weight-rows';
import { writeRowsKernels } from './fused/write-rows';
import { gatherKernel, scatterAddKernel } from './indexing';
import { matmulInto } from './matmul';
import { permuteKernel, sliceKernel, writeSliceKernel } from './movement';
import { type CpuPrecision, checkPrecision, type FloatArray } from './precision';
import { argmaxKernel, reduceKernel } from './reduce';
import { sumRowsInto } from './row-sum';
import { CpuStorage, checkStorageLength, storageBytes } from './storage';
import { cpuThreadsReady } from './threads/shared-pool';
import { unaryKernel } from './unary';
import { type CpuKernelSettings, cpuKernelSettings } from './wasm/settings';

export interface CpuBackendOptions {
  /**
   * How f32-dtype tensors are stored and computed: 'f32' (the default, fast: Float32Array,
   * WebAssembly SIMD kernels) or 'f64' (Float64Array and float64 JavaScript kernels, for
   * gradient checks and numerical references). i32 tensors are Int32Array either way.
   */
  readonly precision?: CpuPrecision;
  /**
   * Threads a large kernel call may use, the calling thread included (default: the host's
   * parallelism, at most 8; 1 runs everything on the calling thread). Workers start on first
   * use; `threadsReady()` starts them and waits.
   */
  readonly threads?: number;
  /** Use the WebAssembly SIMD kernels where the engine has them (default true; false forces the JavaScript kernels). */
  readonly wasm?: boolean;
}

/** Zeros `fill` promised and nobody has used yet: storage is allocated when the tensor is first read or written. */
class PendingZeros {
  constructor(
    readonly dtype: DType,
    readonly length: number,
    /** What the storage will take, counted by `liveBytes`. */
    readonly bytes: number,
  ) {}
}

/** The reference backend: every kernel on host typed arrays, eagerly. */
export class CpuBackend implements Backend {
  readonly name = 'cpu';
  readonly precision: CpuPrecision;
  /** How this backend runs its kernels: its threads and whether WebAssembly is on. */
  readonly kernelSettings: CpuKernelSettings;
  readonly #store = new Map<DataId, CpuStorage | PendingZeros>();
  readonly fused: FusedKernels;

  constructor(options: CpuBackendOptions = {}) {
    this.precision = checkPrecision(options.precision ?? 'f32');
    this.kernelSettings = cpuKernelSettings({ threads: options.threads, wasm: options.wasm });
    const ctx: CpuKernelContext = {
      settings: this.kernelSettings,
      precision: this.precision,
      get: (x) => this.#get(x.id),
      f32: (x) => this.#f32(x),
      out: (count, fill) => this.#out('f32', count, fill),
    };
    this.fused = {
      ...pointwiseKernels(ctx),
      ...normKernels(ctx),
      ...normParamGradKernels(ctx),
      ...softmaxKernels(ctx),
      ...crossEntropyKernels(ctx),
      ...attentionKernels(ctx),
      ...attentionGradKernels(ctx),
      ...attentionStepKernels(ctx),
      ...ropeKernels(ctx),
      ...productKernels(ctx),
      ...selectiveScanKernels(ctx),
      ...adamwKernels(ctx),
      ...writeRowsKernels(ctx),
      ...weightRowsKernels(ctx),
      ...sumSquaresKernels(ctx),
    };
  }

  /**
   * Starts the worker threads this backend's settings ask for and resolves, once they are
   * ready, with the number of threads a large kernel call will use (the calling thread included).
   */
  threadsReady(): Promise<number> {
    return cpuThreadsReady(this.kernelSettings);
  }

  /** Storage of `id` (zeros are allocated at their first use); throws if the id belongs to another backend or was released. */
  #get(id: DataId): CpuStorage {
    const s = this.#store.get(id);
    if (!s) {
      throw new Error(
        id.backend === this.name
          ? 'cpu backend: this tensor storage was already released (the tensor was disposed)'
          : `cpu backend: got storage of the ${id.backend} backend; move the tensor with toBackend() first`,
      );
    }
    if (s instanceof CpuStorage) return s;
    const storage = new CpuStorage(s.dtype, s.length, true, this.precision);
    this.#store.set(id, storage);
    return storage;
  }

  #values(x: TensorInfo): HostArray {
    return this.#get(x.id).values;
  }

  #f32(x: TensorInfo): FloatArray {
    return this.#get(x.id).f32;
  }

  #i32(x: TensorInfo): Int32Array {
    return this.#get(x.id).i32;
  }

  /**
   * Allocates an output, then runs `fill` on it (views are taken after allocation). The output
   * starts zeroed only when `zeroed` (kernels that leave some elements unwritten); the others
   * write every element.
   */
  #out(dtype: DType, length: number, fill: (out: CpuStorage) => void, zeroed = false): DataId {
    const storage = new CpuStorage(dtype, length, zeroed, this.precision);
    const id: DataId = Object.freeze({ backend: this.name });
    this.#store.set(id, storage);
    fill(storage);
    return id;
  }

  /** New storage left as the heap hands it out (`empty`: an op overwrites all of it). */
  alloc(size: number, dtype: DType): DataId {
    return this.#out(dtype, size, () => {});
  }

  /** Copies values in: an Int32Array as i32, a Float32Array or Float64Array as f32 at this backend's precision. */
  upload(values: HostArray): DataId {
    const dtype: DType = values instanceof Int32Array ? 'i32' : 'f32';
    return this.#out(dtype, values.length, (o) => o.values.set(values));
  }

  async read(x: TensorInfo): Promise<HostArray> {
    return this.#values(x).slice();
  }

  /** Synchronous read, available on this backend only. */
  readSync(x: TensorInfo): HostArray {
    return this.#values(x).slice();
  }

  release(id: DataId): void {
    const s = this.#store.get(id);
    if (!(s instanceof PendingZeros)) this.#get(id).free();
    this.#store.delete(id);
  }

  liveCount(): number {
    return this.#store.size;
  }

  liveBytes(): number {
    let total = 0;
    for (const s of this.#store.values()) total += s.bytes;
    return total;
  }

  flush(): void {}

  unary(op: UnaryOp, x: TensorInfo): DataId {
    return this.#out(x.dtype, sizeOf(x.shape), (o) => {
      if (!unaryVectorInto(this.kernelSettings, op, this.#get(x.id), o))
        unaryKernel(op, this.#values(x), o.values);
    });
  }

  binary(op: BinaryOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.#out(a.dtype, sizeOf(outShape), (o) =>
      binaryKernel(
        this.kernelSettings,
        op,
        a.dtype,
        this.#get(a.id),
        a.shape,
        this.#get(b.id),
        b.shape,
        o,
        outShape,
      ),
    );
  }

  compare(op: CompareOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.#out('i32', sizeOf(outShape), (o) =>
      compareKernel(op, this.#values(a), a.shape, this.#values(b), b.shape, o.values, outShape),
    );
  }

  where(cond: TensorInfo, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.#out(a.dtype, sizeOf(outShape), (o) =>
      whereKernel(
        this.#values(cond),
        cond.shape,
        this.#values(a),
        a.shape,
        this.#values(b),
        b.shape,
        o.values,
        outShape,
      ),
    );
  }

  reduce(op: ReduceOp, x: TensorInfo, dims: ReduceDims): DataId {
    return this.#out(x.dtype, dims.outer * dims.inner, (o) => {
      // f32 sums over the last axis (inner 1) or a middle one run in WebAssembly where they can.
      const sum =
        op === 'sum' && x.dtype === 'f32' ? (dims.inner === 1 ? sumRowsInto : sumColumnsInto) : undefined;
      if (!sum?.(this.kernelSettings, this.#get(x.id), dims, o))
        reduceKernel(op, this.#values(x), dims, o.values);
    });
  }

  argmax(x: TensorInfo, dims: ReduceDims): DataId {
    return this.#out('i32', dims.outer * dims.inner, (o) => {
      // f32 rows (the last axis) in WebAssembly where they can: the greedy choice of a decode step.
      if (
        x.dtype !== 'f32' ||
        dims.inner !== 1 ||
        !argmaxRowsInto(this.kernelSettings, this.#get(x.id), dims, o)
      )
        argmaxKernel(this.#values(x), dims, o.i32);
    });
  }

  matmul(a: TensorInfo, b: TensorInfo, spec: MatmulSpec): DataId {
    return this.#out('f32', spec.batch * spec.m * spec.n, (o) =>
      matmulInto(this.kernelSettings, spec, this.#get(a.id), this.#get(b.id), o),
    );
  }

  permute(x: TensorInfo, perm: readonly number[]): DataId {
    return this.#out(x.dtype, sizeOf(x.shape), (o) =>
      permuteKernel(this.kernelSettings, this.#get(x.id), x.shape, perm, o),
    );
  }

  slice(x: TensorInfo, starts: readonly number[], sizes: readonly number[]): DataId {
    return this.#out(x.dtype, sizeOf(sizes), (o) =>
      sliceKernel(this.kernelSettings, this.#get(x.id), x.shape, starts, sizes, o),
    );
  }

  writeSlice(dst: TensorInfo, src: TensorInfo, starts: readonly number[]): void {
    writeSliceKernel(this.kernelSettings, this.#get(dst.id), dst.shape, this.#get(src.id), src.shape, starts);
  }

  gather(table: TensorInfo, ids: TensorInfo): DataId {
    const rows = table.shape[0];
    const rowSize = rows === 0 ? 0 : sizeOf(table.shape) / rows;
    return this.#out(
      table.dtype,
      sizeOf(ids.shape) * rowSize,
      (o) => gatherKernel(this.#values(table), rows, rowSize, this.#i32(ids), o.values),
      true,
    );
  }

  scatterAdd(src: TensorInfo, ids: TensorInfo, numRows: number): DataId {
    const count = sizeOf(ids.shape);
    const rowSize = count === 0 ? sizeOf(src.shape.slice(ids.shape.length)) : sizeOf(src.shape) / count;
    return this.#out(
      'f32',
      numRows * rowSize,
      (o) => scatterAddKernel(this.#f32(src), this.#i32(ids), rowSize, numRows, o.f32),
      true,
    );
  }

  cast(x: TensorInfo, to: DType): DataId {
    return this.#out(to, sizeOf(x.shape), (o) => {
      const v = this.#values(x);
      const out = o.values;
      for (let i = 0; i < v.length; i++) out[i] = to === 'i32' ? Math.trunc(v[i]) : v[i];
    });
  }

  fill(size: number, value: number, dtype: DType): DataId {
    if (value === 0) {
      // Allocated at first use, as the heap's zeros: the f32 weights of a model's compact layers, freed before they
      // are loaded, never take memory or address space (a model built from a GGUF file of more than 4 GiB in f32).
      checkStorageLength(size);
      const id: DataId = Object.freeze({ backend: this.name });
      this.#store.set(id, new PendingZeros(dtype, size, storageBytes(dtype, size, this.precision)));
      return id;
    }
    return this.#out(dtype, size, (o) => o.values.fill(value));
  }

  arange(size: number, start: number, step: number, dtype: DType): DataId {
    return this.#out(dtype, size, (o) => {
      const out = o.values;
      for (let i = 0; i < size; i++) out[i] = start + i * step;
    });
  }

  /** Float32 values at either precision, so that a seed gives the same numbers on every backend. */
  random(kind: RandomKind, size: number, seed: number): DataId {
    const at = kind === 'uniform' ? uniformAt : normalAt;
    return this.#out('f32', size, (o) => {
      const out = o.f32;
      if (out instanceof Float32Array) {
        for (let i = 0; i < size; i++) out[i] = at(seed, i);
      } else {
        for (let i = 0; i < size; i++) out[i] = Math.fround(at(seed, i));
      }
    });
  }
}
