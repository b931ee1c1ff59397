import type {
  Backend,
  BinaryOp,
  CompareOp,
  DataId,
  DType,
  FusedKernels,
  HostArray,
  MatmulSpec,
  RandomKind,
  ReduceDims,
  ReduceOp,
  Shape,
  TensorInfo,
  UnaryOp,
} from '@loom/tensor';
import { acquireDevice, type WebGPUBackendOptions } from './acquire-device';
import type { DeviceFeatures } from './device-features';
import type { DeviceLimits } from './device-limits';
import { fusedKernels } from './fused-kernels';
import { arange } from './kernels/arange';
import { argmax } from './kernels/argmax';
import { binary } from './kernels/binary';
import { cast } from './kernels/cast';
import { compare } from './kernels/compare';
import { fill } from './kernels/fill';
import { gather } from './kernels/gather';
import { tiledMatmul } from './kernels/matmul';
import { matvec } from './kernels/matvec';
import { permute, slice, writeSlice } from './kernels/movement';
import { random } from './kernels/random';
import { reduce } from './kernels/reduce';
import { scatterAdd } from './kernels/scatter-add';
import { unary } from './kernels/unary';
import { where } from './kernels/where';
import { GpuRuntime, type WebGPUStats } from './runtime';

/**
 * Loom's WebGPU backend: every op is a WGSL kernel recorded into batched command buffers;
 * only `read` waits for the device. Create it with `await WebGPUBackend.create(...)`.
 */
export class WebGPUBackend implements Backend {
  readonly name = 'webgpu';
  readonly fused: Partial<FusedKernels>;
  readonly #rt: GpuRuntime;

  private constructor(device: GPUDevice, features?: Partial<DeviceFeatures>) {
    this.#rt = new GpuRuntime(device, features);
    this.fused = fusedKernels(this.#rt);
  }

  /** Runs on `options.device`, or on a new device from `options.gpu` (Node) or `navigator.gpu` (browsers). */
  static async create(options: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
    return new WebGPUBackend(await acquireDevice(options), options.features);
  }

  get device(): GPUDevice {
    return this.#rt.device;
  }

  /** The optional features the kernels use (subgroups, shader-f16), as the device has them. */
  get features(): DeviceFeatures {
    return this.#rt.features;
  }

  /** The limits the kernels were sized for. */
  get limits(): DeviceLimits {
    return this.#rt.limits;
  }

  /**
   * Memory and work counters: running totals of dispatches, command buffers, buffers created, bytes uploaded
   * and read back, pipelines compiled (subtract two snapshots for per-step figures), and the live, pooled and
   * pending memory now.
   */
  stats(): WebGPUStats {
    return this.#rt.stats();
  }

  /** Destroys pooled free buffers; live tensors and buffers still in flight are kept. */
  trimPool(): void {
    this.#rt.pool.trim();
  }

  /** Resolves once all submitted work has finished (recorded work is submitted first). */
  sync(): Promise<void> {
    return this.#rt.sync();
  }

  upload(values: HostArray): DataId {
    return this.#rt.upload(values);
  }

  read(x: TensorInfo): Promise<HostArray> {
    return this.#rt.read(this.#rt.storage(x.id));
  }

  release(id: DataId): void {
    this.#rt.release(this.#rt.storage(id));
  }

  liveCount(): number {
    return this.#rt.liveCount;
  }

  liveBytes(): number {
    return this.#rt.liveBytes;
  }

  flush(): void {
    this.#rt.flush();
  }

  unary(op: UnaryOp, x: TensorInfo): DataId {
    return unary(this.#rt, op, x);
  }

  binary(op: BinaryOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return binary(this.#rt, op, a, b, outShape);
  }

  compare(op: CompareOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return compare(this.#rt, op, a, b, outShape);
  }

  where(cond: TensorInfo, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return where(this.#rt, cond, a, b, outShape);
  }

  reduce(op: ReduceOp, x: TensorInfo, dims: ReduceDims): DataId {
    return reduce(this.#rt, op, x, dims);
  }

  argmax(x: TensorInfo, dims: ReduceDims): DataId {
    return argmax(this.#rt, x, dims);
  }

  matmul(a: TensorInfo, b: TensorInfo, spec: MatmulSpec): DataId {
    return spec.m === 1 ? matvec(this.#rt, a, b, spec) : tiledMatmul(this.#rt, a, b, spec);
  }

  permute(x: TensorInfo, perm: readonly number[]): DataId {
    return permute(this.#rt, x, perm);
  }

  slice(x: TensorInfo, starts: readonly number[], sizes: readonly number[]): DataId {
    return slice(this.#rt, x, starts, sizes);
  }

  writeSlice(dst: TensorInfo, src: TensorInfo, starts: readonly number[]): void {
    writeSlice(this.#rt, dst, src, starts);
  }

  gather(table: TensorInfo, ids: TensorInfo): DataId {
    return gather(this.#rt, table, ids);
  }

  scatterAdd(src: TensorInfo, ids: TensorInfo, numRows: number): DataId {
    return scatterAdd(this.#rt, src, ids, numRows);
  }

  cast(x: TensorInfo, to: DType): DataId {
    return cast(this.#rt, x, to);
  }

  /** A pooled buffer, not written: no dispatch (`empty`). */
  alloc(size: number, dtype: DType): DataId {
    return this.#rt.alloc(size, dtype);
  }

  fill(size: number, value: number, dtype: DType): DataId {
    return fill(this.#rt, size, value, dtype);
  }

  arange(size: number, start: number, step: number, dtype: DType): DataId {
    return arange(this.#rt, size, start, step, dtype);
  }

  random(kind: RandomKind, size: number, seed: number): DataId {
    return random(this.#rt, kind, size, seed);
  }
}
