import {
  type AdamWSpec,
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
  type RandomKind,
  type ReduceDims,
  type ReduceOp,
  type Shape,
  sizeOf,
  stridesOf,
  type TensorInfo,
  type UnaryOp,
  uniformAt,
} from '@loom/tensor';
import { binaryFormula, compareFormulas, unaryFormulas } from './elementwise';
import * as fused from './fused';
import { broadcastIndices, forEachInBox } from './indexing';

/** Storage: f32 values as float32-rounded float64 numbers, i32 values as Int32Array. */
type Values = Float64Array | Int32Array;

/**
 * The conformance kit's reference: every primitive and fused kernel of the `Backend` interface
 * written for clarity (straight loops over row-major arrays, no tiling, no WebAssembly, no
 * threads), shared with no backend. Each op computes in float64 from its inputs and rounds
 * an f32 result to float32 once, as an f32 backend stores it.
 */
export class ReferenceBackend implements Backend {
  readonly name = 'reference';
  readonly #store = new Map<DataId, { dtype: DType; values: Values }>();
  /** A kernel for every fused op the conformance kit knew when this was written; newer ops run as composites of the primitives below. */
  readonly fused = {
    rmsnorm: (x, w, eps) => this.#f32Out(fused.rmsnorm(this.#f(x), this.#f(w), eps)),
    layernorm: (x, w, b, eps) => this.#f32Out(fused.layernorm(this.#f(x), this.#f(w), this.#f(b), eps)),
    rope: (x, offsets, freqs, scale) => this.#f32Out(fused.rope(this.#f(x), x.shape, offsets, freqs, scale)),
    attention: (q, k, v, spec: AttentionSpec) =>
      this.#f32Out(fused.attention(this.#f(q), q.shape, this.#f(k), this.#f(v), k.shape, spec)),
    attentionGrad: (q, k, v, g, dq, dk, dv, spec: AttentionSpec) => {
      const grads = fused.attentionGrad(
        this.#f(q),
        q.shape,
        this.#f(k),
        this.#f(v),
        k.shape,
        this.#f(g),
        spec,
      );
      let at = 0;
      for (const out of [dq, dk, dv].map((x) => this.#f(x))) {
        for (let i = 0; i < out.length; i++) out[i] = Math.fround(out[i] + grads[at + i]);
        at += out.length;
      }
    },
    swiglu: (gate, up) => this.#f32Out(fused.swiglu(this.#f(gate), this.#f(up))),
    softmax: (x) => this.#f32Out(fused.softmax(this.#f(x), x.shape[x.shape.length - 1] ?? 1)),
    logSoftmax: (x) => this.#f32Out(fused.logSoftmax(this.#f(x), x.shape[x.shape.length - 1] ?? 1)),
    softmaxCrossEntropy: (logits, targets, ignoreIndex) =>
      this.#f32Out(
        Float64Array.of(
          fused.softmaxCrossEntropy(this.#f(logits), this.#i(targets), logits.shape[1], ignoreIndex),
        ),
      ),
    softmaxCrossEntropyGrad: (logits, targets, grad, ignoreIndex) =>
      this.#f32Out(
        fused.softmaxCrossEntropyGrad(
          this.#f(logits),
          this.#i(targets),
          logits.shape[1],
          this.#f(grad)[0],
          ignoreIndex,
        ),
      ),
    geluGrad: (x, grad) => this.#f32Out(fused.geluGrad(this.#f(x), this.#f(grad))),
    swigluGrad: (gate, up, grad) => this.#f32Out(fused.swigluGrad(this.#f(gate), this.#f(up), this.#f(grad))),
    rmsnormGrad: (x, w, g, eps) => this.#f32Out(fused.rmsnormGrad(this.#f(x), this.#f(w), this.#f(g), eps)),
    layernormGrad: (x, w, g, eps) =>
      this.#f32Out(fused.layernormGrad(this.#f(x), this.#f(w), this.#f(g), eps)),
    rmsnormWeightGrad: (x, g, eps) =>
      this.#f32Out(fused.rmsnormWeightGrad(this.#f(x), this.#f(g), x.shape[x.shape.length - 1] ?? 0, eps)),
    layernormParamGrad: (x, g, eps) =>
      this.#f32Out(fused.layernormParamGrad(this.#f(x), this.#f(g), x.shape[x.shape.length - 1] ?? 0, eps)),
    adamw: (p, g, m, v, spec: AdamWSpec) => fused.adamw(this.#f(p), this.#f(g), this.#f(m), this.#f(v), spec),
    selectiveScan: (x, delta, a, b, c, d) =>
      this.#f32Out(
        fused.selectiveScan(
          this.#f(x),
          this.#f(delta),
          this.#f(a),
          this.#f(b),
          this.#f(c),
          this.#f(d),
          x.shape,
          a.shape[1],
        ),
      ),
  } satisfies Partial<FusedKernels>;

  #entry(id: DataId): { dtype: DType; values: Values } {
    const entry = this.#store.get(id);
    if (!entry)
      throw new Error(`reference backend: storage of the ${id.backend} backend, or already released`);
    return entry;
  }

  #values(x: TensorInfo): Values {
    return this.#entry(x.id).values;
  }

  #f(x: TensorInfo): Float64Array {
    const values = this.#values(x);
    if (!(values instanceof Float64Array)) throw new Error('reference backend: expected an f32 tensor');
    return values;
  }

  #i(x: TensorInfo): Int32Array {
    const values = this.#values(x);
    if (!(values instanceof Int32Array)) throw new Error('reference backend: expected an i32 tensor');
    return values;
  }

  /** Stores `values` as a new tensor of `dtype` (f32 values round to float32, i32 values wrap). */
  #out(dtype: DType, values: ArrayLike<number>): DataId {
    const stored: Values = dtype === 'i32' ? Int32Array.from(values) : Float64Array.from(values, Math.fround);
    const id: DataId = Object.freeze({ backend: this.name });
    this.#store.set(id, { dtype, values: stored });
    return id;
  }

  #f32Out(values: ArrayLike<number>): DataId {
    return this.#out('f32', values);
  }

  upload(values: HostArray): DataId {
    return this.#out(values instanceof Int32Array ? 'i32' : 'f32', values);
  }

  async read(x: TensorInfo): Promise<HostArray> {
    const values = this.#values(x);
    return values instanceof Int32Array ? values.slice() : Float32Array.from(values);
  }

  release(id: DataId): void {
    this.#entry(id);
    this.#store.delete(id);
  }

  liveCount(): number {
    return this.#store.size;
  }

  liveBytes(): number {
    let bytes = 0;
    for (const { values } of this.#store.values()) bytes += 4 * values.length;
    return bytes;
  }

  flush(): void {}

  unary(op: UnaryOp, x: TensorInfo): DataId {
    return this.#out(x.dtype, Array.from(this.#values(x), unaryFormulas[op]));
  }

  #elementwise(a: TensorInfo, b: TensorInfo, outShape: Shape, f: (a: number, b: number) => number): number[] {
    const [va, vb] = [this.#values(a), this.#values(b)];
    const [ia, ib] = [broadcastIndices(a.shape, outShape), broadcastIndices(b.shape, outShape)];
    return Array.from(ia, (_, i) => f(va[ia[i]], vb[ib[i]]));
  }

  binary(op: BinaryOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.#out(a.dtype, this.#elementwise(a, b, outShape, binaryFormula(op, a.dtype)));
  }

  compare(op: CompareOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.#out('i32', this.#elementwise(a, b, outShape, compareFormulas[op]));
  }

  where(cond: TensorInfo, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    const [vc, va, vb] = [this.#values(cond), this.#values(a), this.#values(b)];
    const [ic, ia, ib] = [cond, a, b].map((t) => broadcastIndices(t.shape, outShape));
    return this.#out(
      a.dtype,
      Array.from(ic, (_, i) => (vc[ic[i]] !== 0 ? va[ia[i]] : vb[ib[i]])),
    );
  }

  reduce(op: ReduceOp, x: TensorInfo, { outer, size, inner }: ReduceDims): DataId {
    const v = this.#values(x);
    const out: number[] = [];
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        let acc = op === 'sum' ? 0 : Number.NEGATIVE_INFINITY;
        for (let s = 0; s < size; s++) {
          const value = v[(o * size + s) * inner + j];
          acc = op === 'sum' ? acc + value : Number.isNaN(value) || value > acc ? value : acc;
        }
        out.push(acc);
      }
    }
    return this.#out(x.dtype, out);
  }

  argmax(x: TensorInfo, { outer, size, inner }: ReduceDims): DataId {
    const v = this.#values(x);
    const out: number[] = [];
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        let best = 0;
        for (let s = 1; s < size; s++) {
          if (v[(o * size + s) * inner + j] > v[(o * size + best) * inner + j]) best = s;
        }
        out.push(best);
      }
    }
    return this.#out('i32', out);
  }

  matmul(a: TensorInfo, b: TensorInfo, spec: MatmulSpec): DataId {
    const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = spec;
    const [va, vb] = [this.#f(a), this.#f(b)];
    const out = new Float64Array(batch * m * n);
    for (let e = 0; e < batch; e++) {
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let acc = 0;
          for (let p = 0; p < k; p++) {
            const aij = va[e * aBatchStride + (transA ? p * m + i : i * k + p)];
            const bij = vb[e * bBatchStride + (transB ? j * k + p : p * n + j)];
            acc += aij * bij;
          }
          out[(e * m + i) * n + j] = acc;
        }
      }
    }
    return this.#f32Out(out);
  }

  permute(x: TensorInfo, perm: readonly number[]): DataId {
    const v = this.#values(x);
    const inStrides = stridesOf(x.shape);
    const outShape = perm.map((axis) => x.shape[axis]);
    const out: number[] = [];
    for (let i = 0; i < v.length; i++) {
      // Output element i's index along each output axis d reads input axis perm[d].
      let rest = i;
      let flat = 0;
      for (let d = outShape.length - 1; d >= 0; d--) {
        flat += (rest % outShape[d]) * inStrides[perm[d]];
        rest = Math.floor(rest / outShape[d]);
      }
      out.push(v[flat]);
    }
    return this.#out(x.dtype, out);
  }

  slice(x: TensorInfo, starts: readonly number[], sizes: readonly number[]): DataId {
    const v = this.#values(x);
    const out: number[] = [];
    forEachInBox(x.shape, starts, sizes, (flat) => out.push(v[flat]));
    return this.#out(x.dtype, out);
  }

  writeSlice(dst: TensorInfo, src: TensorInfo, starts: readonly number[]): void {
    const [d, s] = [this.#values(dst), this.#values(src)];
    forEachInBox(dst.shape, starts, src.shape, (flat, i) => {
      d[flat] = s[i];
    });
  }

  gather(table: TensorInfo, ids: TensorInfo): DataId {
    const [t, idx] = [this.#values(table), this.#i(ids)];
    const rows = table.shape[0];
    const rowSize = rows === 0 ? 0 : sizeOf(table.shape) / rows;
    const out: number[] = [];
    for (const id of idx) {
      for (let c = 0; c < rowSize; c++) out.push(id >= 0 && id < rows ? t[id * rowSize + c] : 0);
    }
    return this.#out(table.dtype, out);
  }

  scatterAdd(src: TensorInfo, ids: TensorInfo, numRows: number): DataId {
    const [s, idx] = [this.#f(src), this.#i(ids)];
    const rowSize = idx.length === 0 ? sizeOf(src.shape.slice(ids.shape.length)) : s.length / idx.length;
    const out = new Float64Array(numRows * rowSize);
    idx.forEach((id, i) => {
      if (id < 0 || id >= numRows) return;
      for (let c = 0; c < rowSize; c++) out[id * rowSize + c] += s[i * rowSize + c];
    });
    return this.#f32Out(out);
  }

  cast(x: TensorInfo, to: DType): DataId {
    return this.#out(
      to,
      Array.from(this.#values(x), (v) => (to === 'i32' ? Math.trunc(v) : v)),
    );
  }

  fill(size: number, value: number, dtype: DType): DataId {
    return this.#out(dtype, new Array<number>(size).fill(value));
  }

  arange(size: number, start: number, step: number, dtype: DType): DataId {
    return this.#out(
      dtype,
      Array.from({ length: size }, (_, i) => start + i * step),
    );
  }

  /** The counter-based generator of `@loom/tensor`'s random.ts: the one part every backend must match bit for bit. */
  random(kind: RandomKind, size: number, seed: number): DataId {
    const at = kind === 'uniform' ? uniformAt : normalAt;
    return this.#f32Out(Array.from({ length: size }, (_, i) => at(seed, i)));
  }
}
