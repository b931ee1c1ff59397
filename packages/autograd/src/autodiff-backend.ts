import {
  type Backend,
  type BinaryOp,
  type CompareOp,
  type DataId,
  type DType,
  type FusedKernels,
  type HostArray,
  type MatmulSpec,
  type RandomKind,
  type ReduceDims,
  type ReduceOp,
  type Shape,
  Tensor,
  type TensorInfo,
  type UnaryOp,
} from '@loom/tensor';
import { binaryRule, whereRule } from './rules/binary';
import type { RuleContext } from './rules/context';
import {
  crossEntropyRule,
  layernormRule,
  logSoftmaxRule,
  rmsnormRule,
  ropeRule,
  softmaxRule,
  swigluRule,
} from './rules/fused';
import { gatherRule, scatterAddRule } from './rules/indexing';
import { matmulRule } from './rules/matmul';
import { permuteRule, sliceRule, writeSliceRule } from './rules/movement';
import { reduceRule } from './rules/reduce';
import { unaryRule } from './rules/unary';
import { type BackwardFn, Tape } from './tape';

/**
 * Reverse-mode autodiff as a backend decorator: every kernel runs on the inner backend, and
 * while a tape is open, ops whose inputs require gradients are recorded with their rule.
 * Plain inference (no tape) costs one check per op. Fused kernels are offered only where the
 * inner backend has them and a backward rule exists; other fused ops run as composites and
 * are differentiated through their primitives.
 */
export class AutodiffBackend implements Backend {
  readonly name: string;
  /** Fused kernels while recording: those with a backward rule. */
  readonly #recordingFused: Partial<FusedKernels>;
  #tape: Tape | undefined;
  /** Storage released while the tape still needed it; freed when the tape closes. */
  readonly #deferred = new Set<DataId>();
  readonly #ctx: RuleContext = { borrow: (info) => Tensor.borrow(this, info) };

  constructor(readonly inner: Backend) {
    this.name = inner.name;
    this.#recordingFused = this.#fusedKernels();
  }

  /** All of the inner backend's fused kernels, except while recording (see the class comment). */
  get fused(): Partial<FusedKernels> {
    return this.#tape ? this.#recordingFused : this.inner.fused;
  }

  /** The open tape, if a gradient computation is running. */
  get tape(): Tape | undefined {
    return this.#tape;
  }

  /** Opens a tape on which `watched` storage requires gradients. */
  openTape(watched: readonly TensorInfo[]): Tape {
    if (this.#tape) throw new Error('autograd: a gradient computation is already running on this backend');
    const tape = new Tape();
    for (const w of watched) tape.requiresGrad.add(w.id);
    this.#tape = tape;
    return tape;
  }

  /** Stops recording (the tape stays readable for backward). */
  pauseTape(): Tape {
    const tape = this.#tape;
    if (!tape) throw new Error('autograd: no gradient computation is running');
    this.#tape = undefined;
    return tape;
  }

  /** Releases storage whose release waited for the tape. */
  closeTape(): void {
    for (const id of this.#deferred) this.inner.release(id);
    this.#deferred.clear();
  }

  #record(op: string, inputs: TensorInfo[], output: TensorInfo, backward: () => BackwardFn): void {
    const tape = this.#tape;
    if (tape?.needsGrad(...inputs)) tape.record({ op, inputs, output, backward: backward() });
  }

  #fusedKernels(): Partial<FusedKernels> {
    const k = this.inner.fused;
    const out: Partial<FusedKernels> = {};
    const info = (id: DataId, like: TensorInfo): TensorInfo => ({ id, shape: like.shape, dtype: like.dtype });
    if (k.softmax) {
      const f = k.softmax;
      out.softmax = (x) => {
        const id = f(x);
        this.#record('softmax', [x], info(id, x), () => softmaxRule(this.#ctx, info(id, x)));
        return id;
      };
    }
    if (k.logSoftmax) {
      const f = k.logSoftmax;
      out.logSoftmax = (x) => {
        const id = f(x);
        this.#record('logSoftmax', [x], info(id, x), () => logSoftmaxRule(this.#ctx, info(id, x)));
        return id;
      };
    }
    if (k.rmsnorm) {
      const f = k.rmsnorm;
      out.rmsnorm = (x, w, eps) => {
        const id = f(x, w, eps);
        this.#record('rmsnorm', [x, w], info(id, x), () => rmsnormRule(this.#ctx, x, w, eps));
        return id;
      };
    }
    if (k.layernorm) {
      const f = k.layernorm;
      out.layernorm = (x, w, b, eps) => {
        const id = f(x, w, b, eps);
        this.#record('layernorm', [x, w, b], info(id, x), () => layernormRule(this.#ctx, x, w, eps));
        return id;
      };
    }
    if (k.swiglu) {
      const f = k.swiglu;
      out.swiglu = (gate, up) => {
        const id = f(gate, up);
        this.#record('swiglu', [gate, up], info(id, gate), () => swigluRule(this.#ctx, gate, up));
        return id;
      };
    }
    if (k.rope) {
      const f = k.rope;
      out.rope = (x, offset, theta) => {
        const id = f(x, offset, theta);
        this.#record('rope', [x], info(id, x), () => ropeRule(x, offset, theta));
        return id;
      };
    }
    if (k.softmaxCrossEntropy) {
      const f = k.softmaxCrossEntropy;
      out.softmaxCrossEntropy = (logits, targets, ignoreIndex) => {
        const id = f(logits, targets, ignoreIndex);
        const output: TensorInfo = { id, shape: [], dtype: 'f32' };
        this.#record('softmaxCrossEntropy', [logits, targets], output, () =>
          crossEntropyRule(this.#ctx, logits, targets, ignoreIndex),
        );
        return id;
      };
    }
    return out;
  }

  upload(values: HostArray): DataId {
    return this.inner.upload(values);
  }

  read(x: TensorInfo): Promise<HostArray> {
    return this.inner.read(x);
  }

  release(id: DataId): void {
    const tape = this.#tape;
    if (tape?.referenced.has(id)) this.#deferred.add(id);
    else this.inner.release(id);
  }

  liveCount(): number {
    return this.inner.liveCount();
  }

  liveBytes(): number {
    return this.inner.liveBytes();
  }

  flush(): void {
    this.inner.flush();
  }

  unary(op: UnaryOp, x: TensorInfo): DataId {
    const id = this.inner.unary(op, x);
    const out = { id, shape: x.shape, dtype: x.dtype };
    this.#record(op, [x], out, () => unaryRule(this.#ctx, op, x, out));
    return id;
  }

  binary(op: BinaryOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    const id = this.inner.binary(op, a, b, outShape);
    const out = { id, shape: outShape, dtype: a.dtype };
    this.#record(op, [a, b], out, () => binaryRule(this.#ctx, op, a, b, out));
    return id;
  }

  compare(op: CompareOp, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    return this.inner.compare(op, a, b, outShape);
  }

  where(cond: TensorInfo, a: TensorInfo, b: TensorInfo, outShape: Shape): DataId {
    const id = this.inner.where(cond, a, b, outShape);
    this.#record('where', [cond, a, b], { id, shape: outShape, dtype: a.dtype }, () =>
      whereRule(this.#ctx, cond, a, b),
    );
    return id;
  }

  reduce(op: ReduceOp, x: TensorInfo, dims: ReduceDims): DataId {
    const id = this.inner.reduce(op, x, dims);
    const out = { id, shape: [dims.outer, dims.inner], dtype: x.dtype };
    this.#record(op, [x], out, () => reduceRule(this.#ctx, op, x, out, dims));
    return id;
  }

  argmax(x: TensorInfo, dims: ReduceDims): DataId {
    return this.inner.argmax(x, dims);
  }

  matmul(a: TensorInfo, b: TensorInfo, spec: MatmulSpec): DataId {
    const id = this.inner.matmul(a, b, spec);
    const out = { id, shape: [spec.batch, spec.m, spec.n], dtype: a.dtype };
    this.#record('matmul', [a, b], out, () => matmulRule(this.#ctx, a, b, spec));
    return id;
  }

  permute(x: TensorInfo, perm: readonly number[]): DataId {
    const id = this.inner.permute(x, perm);
    const out = { id, shape: perm.map((p) => x.shape[p]), dtype: x.dtype };
    this.#record('permute', [x], out, () => permuteRule(perm));
    return id;
  }

  slice(x: TensorInfo, starts: readonly number[], sizes: readonly number[]): DataId {
    const id = this.inner.slice(x, starts, sizes);
    this.#record('slice', [x], { id, shape: sizes, dtype: x.dtype }, () => sliceRule(x, starts));
    return id;
  }

  writeSlice(dst: TensorInfo, src: TensorInfo, starts: readonly number[]): void {
    const tape = this.#tape;
    if (tape?.needsGrad(dst) && !tape.writeTargets.has(dst.id)) {
      throw new Error(
        'writeSlice: writing into a tensor that requires gradients is not differentiable; write into a fresh tensor',
      );
    }
    this.inner.writeSlice(dst, src, starts);
    if (tape?.needsGrad(src)) tape.writeTargets.add(dst.id);
    this.#record('writeSlice', [src], dst, () => writeSliceRule(src, starts));
  }

  gather(table: TensorInfo, ids: TensorInfo): DataId {
    const id = this.inner.gather(table, ids);
    const rowShape = table.shape.slice(1);
    this.#record('gather', [table, ids], { id, shape: [...ids.shape, ...rowShape], dtype: table.dtype }, () =>
      gatherRule(this.#ctx, table, ids),
    );
    return id;
  }

  scatterAdd(src: TensorInfo, ids: TensorInfo, numRows: number): DataId {
    const id = this.inner.scatterAdd(src, ids, numRows);
    const rowShape = src.shape.slice(ids.shape.length);
    this.#record('scatterAdd', [src, ids], { id, shape: [numRows, ...rowShape], dtype: src.dtype }, () =>
      scatterAddRule(this.#ctx, src, ids),
    );
    return id;
  }

  cast(x: TensorInfo, to: DType): DataId {
    return this.inner.cast(x, to);
  }

  fill(size: number, value: number, dtype: DType): DataId {
    return this.inner.fill(size, value, dtype);
  }

  arange(size: number, start: number, step: number, dtype: DType): DataId {
    return this.inner.arange(size, start, step, dtype);
  }

  random(kind: RandomKind, size: number, seed: number): DataId {
    return this.inner.random(kind, size, seed);
  }
}
