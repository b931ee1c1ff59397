import {
  type AttentionSpec,
  type Backend,
  type BinaryOp,
  type CompareOp,
  type DataId,
  type DType,
  type FusedKernels,
  type HostArray,
  type MatmulSpec,
  normalAt,
  QUANT_BLOCK,
  quantizedShape,
  type RandomKind,
  type ReduceDims,
  type ReduceOp,
  type Shape,
  sizeOf,
  type TensorInfo,
  type UnaryOp,
  uniformAt,
} from '@loom/tensor';
import { geluGradInto, swigluInto, unaryVectorInto } from './activation';
import { binaryKernel, compareKernel, whereKernel } from './binary';
import { sumColumnsInto } from './column-sum';
import { adamwInPlace } from './fused/adamw';
import { attentionKernel } from './fused/attention';
import { attentionGemmInto } from './fused/attention-gemm';
import { decodeAttentionInto } from './fused/decode-attention';
import { gegluInto } from './fused/geglu';
import { halfMatmulInto } from './fused/half-matmul';
import { layernormGradKernel, layernormKernel, rmsnormGradKernel, rmsnormKernel } from './fused/norm';
import { quantizedMatmulInto } from './fused/quantized-matmul';
import { ropeInto } from './fused/rope';
import { selectiveScanGradKernel, selectiveScanKernel } from './fused/selective-scan';
import { softcapInto } from './fused/softcap';
import { crossEntropyKernel, softmaxKernel } from './fused/softmax';
import { swigluBlockInto } from './fused/swiglu-block';
import { gatherKernel, scatterAddKernel } from './indexing';
import { matmulInto } from './matmul';
import { permuteKernel, sliceKernel, writeSliceKernel } from './movement';
import { normRowsInto } from './norm-rows';
import { type CpuPrecision, checkPrecision, type FloatArray } from './precision';
import { argmaxKernel, reduceKernel } from './reduce';
import { CpuStorage } from './storage';
import { cpuThreadsReady } from './threads/shared-pool';
import { unaryKernel } from './unary';
import { runRowKernel } from './vectorised';
import { NORM_KERNELS } from './wasm/norm-kernel';
import { type CpuKernelSettings, cpuKernelSettings } from './wasm/settings';
import { SOFTMAX_KERNEL } from './wasm/softmax-kernel';

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

/** The reference backend: every kernel on host typed arrays, eagerly. */
export class CpuBackend implements Backend {
  readonly name = 'cpu';
  readonly precision: CpuPrecision;
  /** How this backend runs its kernels: its threads and whether WebAssembly is on. */
  readonly kernelSettings: CpuKernelSettings;
  readonly #store = new Map<DataId, CpuStorage>();
  readonly fused: FusedKernels;

  constructor(options: CpuBackendOptions = {}) {
    this.precision = checkPrecision(options.precision ?? 'f32');
    this.kernelSettings = cpuKernelSettings({ threads: options.threads, wasm: options.wasm });
    const k = this.kernelSettings;
    this.fused = {
      rmsnorm: (x, w, eps) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          if (!normRowsInto(k, NORM_KERNELS.rmsnorm, [this.#get(x.id)], [this.#get(w.id)], o, eps)) {
            rmsnormKernel(this.#f32(x), this.#f32(w), eps, o.f32);
          }
        }),
      layernorm: (x, w, b, eps) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          const weights = [this.#get(w.id), this.#get(b.id)];
          if (!normRowsInto(k, NORM_KERNELS.layernorm, [this.#get(x.id)], weights, o, eps)) {
            layernormKernel(this.#f32(x), this.#f32(w), this.#f32(b), eps, o.f32);
          }
        }),
      rope: (x, offset, freqs, scale) =>
        this.#out('f32', sizeOf(x.shape), (o) =>
          ropeInto(k, this.#get(x.id), x.shape, offset, freqs, scale, o),
        ),
      swiglu: (gate, up) =>
        this.#out('f32', sizeOf(gate.shape), (o) => swigluInto(k, this.#get(gate.id), this.#get(up.id), o)),
      swigluBlock: (x, normWeight, w1, w3, w2, eps) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          const [xs, ns, s1, s3, s2] = [x, normWeight, w1, w3, w2].map((t) => this.#get(t.id));
          swigluBlockInto(k, this.precision, { x: xs, normWeight: ns, w1: s1, w3: s3, w2: s2 }, eps, o);
        }),
      rmsnormGrad: (x, w, g, eps) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          const rows = [this.#get(x.id), this.#get(g.id)];
          if (!normRowsInto(k, NORM_KERNELS.rmsnormGrad, rows, [this.#get(w.id)], o, eps)) {
            rmsnormGradKernel(this.#f32(x), this.#f32(w), this.#f32(g), eps, o.f32);
          }
        }),
      layernormGrad: (x, w, g, eps) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          const rows = [this.#get(x.id), this.#get(g.id)];
          if (!normRowsInto(k, NORM_KERNELS.layernormGrad, rows, [this.#get(w.id)], o, eps)) {
            layernormGradKernel(this.#f32(x), this.#f32(w), this.#f32(g), eps, o.f32);
          }
        }),
      adamw: (p, g, m, v, spec) =>
        adamwInPlace(k, this.#get(p.id), this.#get(g.id), this.#get(m.id), this.#get(v.id), spec),
      geglu: (gate, up) =>
        this.#out('f32', sizeOf(gate.shape), (o) => gegluInto(this.#get(gate.id), this.#get(up.id), o)),
      geluGrad: (x, grad) =>
        this.#out('f32', sizeOf(x.shape), (o) => geluGradInto(k, this.#get(x.id), this.#get(grad.id), o)),
      softcap: (x, cap) => this.#out('f32', sizeOf(x.shape), (o) => softcapInto(this.#get(x.id), cap, o)),
      quantizedMatmul: (x, scales, quants, type) => {
        const [out, inner] = quantizedShape(type, scales.shape);
        const product = { type, rows: sizeOf(x.shape) / inner, out, blocks: inner / QUANT_BLOCK };
        const operands = [this.#get(x.id), this.#get(scales.id), this.#get(quants.id)] as const;
        return this.#out('f32', product.rows * out, (o) => quantizedMatmulInto(k, product, ...operands, o));
      },
      halfMatmul: (x, packed, type) => {
        const [out, words] = packed.shape;
        const product = { type, rows: sizeOf(x.shape) / (words * 2), out, inner: words * 2 };
        return this.#out('f32', product.rows * out, (o) =>
          halfMatmulInto(k, product, this.#get(x.id), this.#get(packed.id), o),
        );
      },
      selectiveScan: (x, delta, a, b, c, d) =>
        this.#out('f32', sizeOf(x.shape), (o) =>
          selectiveScanKernel(
            this.#f32(x),
            this.#f32(delta),
            this.#f32(a),
            this.#f32(b),
            this.#f32(c),
            this.#f32(d),
            x.shape,
            a.shape[1],
            o.f32,
          ),
        ),
      selectiveScanGrad: (x, delta, a, b, c, d, g) =>
        this.#out('f32', 2 * sizeOf(x.shape) + sizeOf(a.shape) + 2 * sizeOf(b.shape) + d.shape[0], (o) =>
          selectiveScanGradKernel(
            this.#f32(x),
            this.#f32(delta),
            this.#f32(a),
            this.#f32(b),
            this.#f32(c),
            this.#f32(d),
            this.#f32(g),
            x.shape,
            a.shape[1],
            o.f32,
          ),
        ),
      softmax: (x) =>
        this.#out('f32', sizeOf(x.shape), (o) => {
          const cols = lastDim(x.shape);
          const rows = cols === 0 ? 0 : sizeOf(x.shape) / cols;
          if (!runRowKernel(k, SOFTMAX_KERNEL, [this.#get(x.id)], [], o, rows, cols)) {
            softmaxKernel(this.#f32(x), cols, false, o.f32);
          }
        }),
      logSoftmax: (x) =>
        this.#out('f32', sizeOf(x.shape), (o) => softmaxKernel(this.#f32(x), lastDim(x.shape), true, o.f32)),
      softmaxCrossEntropy: (logits, targets, ignoreIndex) =>
        this.#out('f32', 1, (o) => {
          o.f32[0] = crossEntropyKernel(this.#f32(logits), this.#i32(targets), logits.shape[1], ignoreIndex);
        }),
      attention: (q, k, v, spec: AttentionSpec) =>
        this.#out('f32', sizeOf(q.shape), (o) => {
          const [qs, ks, vs] = [this.#get(q.id), this.#get(k.id), this.#get(v.id)];
          if (
            !decodeAttentionInto(this.kernelSettings, qs, q.shape, ks, vs, k.shape, spec, o) &&
            !attentionGemmInto(this.kernelSettings, qs, q.shape, ks, vs, k.shape, spec, o)
          ) {
            attentionKernel(qs.f32, q.shape, ks.f32, vs.f32, k.shape, spec, o.f32);
          }
        }),
    };
  }

  /**
   * Starts the worker threads this backend's settings ask for and resolves, once they are
   * ready, with the number of threads a large kernel call will use (the calling thread included).
   */
  threadsReady(): Promise<number> {
    return cpuThreadsReady(this.kernelSettings);
  }

  /** Storage of `id`; throws if the id belongs to another backend or was released. */
  #get(id: DataId): CpuStorage {
    const s = this.#store.get(id);
    if (!s) {
      throw new Error(
        id.backend === this.name
          ? 'cpu backend: this tensor storage was already released (the tensor was disposed)'
          : `cpu backend: got storage of the ${id.backend} backend; move the tensor with toBackend() first`,
      );
    }
    return s;
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
    this.#get(id).free();
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
      const columns = op === 'sum' && x.dtype === 'f32' && dims.inner > 1;
      if (!columns || !sumColumnsInto(this.kernelSettings, this.#get(x.id), dims, o))
        reduceKernel(op, this.#values(x), dims, o.values);
    });
  }

  argmax(x: TensorInfo, dims: ReduceDims): DataId {
    return this.#out('i32', dims.outer * dims.inner, (o) => argmaxKernel(this.#values(x), dims, o.i32));
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

function lastDim(shape: Shape): number {
  return shape[shape.length - 1];
}
