import {
  type AnyFusedOp,
  type Backend,
  type BinaryOp,
  borrowTensor,
  type CompareOp,
  type DataId,
  type DType,
  type FusedKernels,
  fusedOps,
  type HostArray,
  type InfosOf,
  type InputNames,
  kernelOf,
  type MatmulSpec,
  type RandomKind,
  type ReduceDims,
  type ReduceOp,
  type Shape,
  type TensorInfo,
  type TensorsOf,
  type UnaryOp,
} from '@loom/tensor';
import { binaryRule, whereRule } from './rules/binary';
import type { RuleContext } from './rules/context';
import { gatherRule, scatterAddRule } from './rules/indexing';
import { matmulRule } from './rules/matmul';
import { permuteRule, sliceRule, writeSliceRule } from './rules/movement';
import { reduceRule } from './rules/reduce';
import { unaryRule } from './rules/unary';
import { type BackwardFn, Tape } from './tape';

/** A fused kernel seen through the op table: tensor inputs first, then parameters. */
// biome-ignore lint/suspicious/noConfusingVoidType: in-place kernels return nothing (void), the others new storage.
type TableKernel = (...args: [TensorInfo, ...unknown[]]) => DataId | void;

/**
 * Reverse-mode autodiff as a backend decorator: every kernel runs on the inner backend, and
 * while a tape is open, ops whose inputs require gradients are recorded with their rule.
 * Plain inference (no tape) costs one check per op. While recording, each fused op of the
 * table (`fusedOps`) that the inner backend has a kernel for is offered as its op declares:
 * with a backward rule, the kernel runs and is recorded with it; 'through-composite', the
 * kernel is withheld so the composite runs and is differentiated through its primitives;
 * 'none', the kernel runs and refuses inputs that require gradients.
 */
export class AutodiffBackend implements Backend {
  readonly name: string;
  /** Fused kernels while recording: those with a backward rule. */
  readonly #recordingFused: Partial<FusedKernels>;
  #tape: Tape | undefined;
  /** Storage released while the tape still needed it; freed when the tape closes. */
  readonly #deferred = new Set<DataId>();
  readonly #ctx: RuleContext = { borrow: (info) => borrowTensor(this, info) };

  /** The inner backend's `alloc`, where it has one (`empty` fills zeros where not). */
  readonly alloc?: (size: number, dtype: DType) => DataId;

  constructor(readonly inner: Backend) {
    this.name = inner.name;
    this.alloc = inner.alloc?.bind(inner);
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
    const out: Record<string, unknown> = {};
    for (const op of Object.values(fusedOps) as AnyFusedOp[]) {
      const kernel = kernelOf(this.inner, op);
      const recording = kernel && this.#recording(op, kernel);
      if (recording) out[op.name] = recording;
    }
    return out;
  }

  /**
   * `kernel` of `op` as offered while recording: recording its backward rule, refusing
   * gradients ('none'), or not at all ('through-composite': undefined).
   */
  #recording(op: AnyFusedOp, kernel: TableKernel): TableKernel | undefined {
    const arity = op.inputs.length;
    const inputsOf = (args: readonly unknown[]): InfosOf<InputNames> =>
      args.slice(0, arity) as unknown as InfosOf<InputNames>;
    if (op.kind === 'in-place' || op.gradient === 'none') {
      return (...args) => {
        if (this.#tape?.needsGrad(...inputsOf(args))) {
          throw new Error(
            `${op.name}: not differentiable; call it outside valueAndGrad or on tensors that need no gradient`,
          );
        }
        return kernel(...args);
      };
    }
    if (op.gradient === 'through-composite') return undefined;
    const rule = op.gradient;
    return (...args) => {
      const id = kernel(...args);
      if (id === undefined) throw new Error(`${op.name}: the kernel returned no storage`);
      const inputs = inputsOf(args);
      const params = args.slice(arity);
      const output: TensorInfo = { id, shape: op.outputShape(inputs, params), dtype: 'f32' };
      this.#record(
        op.name,
        [...inputs],
        output,
        () => (grad, needs) =>
          rule.backward({
            inputs: inputs.map((info) => borrowTensor(this, info)) as unknown as TensorsOf<InputNames>,
            output: borrowTensor(this, output),
            params,
            grad,
            needs,
          }),
      );
      return id;
    };
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
