import type { DataId, TensorInfo } from '../backend';
import type { Shape } from '../shape';
import type { Tensor } from '../tensor';
import type { FusedCases } from './case';

/** Names of a fused op's tensor inputs, in kernel order (at least one). */
export type InputNames = readonly [string, ...string[]];

/** One TensorInfo per tensor input: what a kernel receives. */
export type InfosOf<I extends InputNames> = { readonly [K in keyof I]: TensorInfo };

/** One Tensor per tensor input: what a composite and a backward rule receive. */
export type TensorsOf<I extends InputNames> = { readonly [K in keyof I]: Tensor };

/** What a backward rule receives: borrowed inputs and output, the parameters and the upstream gradient. */
export interface BackwardArgs<I extends InputNames, P extends readonly unknown[]> {
  readonly inputs: TensorsOf<I>;
  readonly output: Tensor;
  readonly params: P;
  /** Gradient of the loss with respect to the output, shaped like it. */
  readonly grad: Tensor;
  /** Which inputs need a gradient; a rule may return undefined for the others and skip their work. */
  readonly needs: readonly boolean[];
}

/**
 * How autograd differentiates a fused op while a tape is open:
 * - `{ backward }`: the kernel runs and is recorded with this rule, which returns the input
 *   gradients, one per tensor input (undefined where `needs` says none is needed);
 * - `'through-composite'`: the kernel is withheld and the composite runs, differentiated
 *   through its primitives (for ops whose backward is not worth a rule of its own);
 * - `'none'`: not differentiable (in-place updates); the kernel runs and an input that
 *   requires a gradient is an error.
 */
export type Gradient<I extends InputNames, P extends readonly unknown[]> =
  | { backward(args: BackwardArgs<I, P>): readonly (Tensor | undefined)[] }
  | 'through-composite'
  | 'none';

/** A fused op that returns a new tensor; its kernel returns the storage. */
export interface FusedOp<N extends string, I extends InputNames, P extends readonly unknown[]> {
  readonly kind: 'returns';
  readonly name: N;
  readonly inputs: I;
  /** The output's shape (its dtype is f32), from the inputs and parameters the front-end checked. */
  outputShape(inputs: InfosOf<I>, params: P): Shape;
  /** The op written with primitives: every backend without the kernel runs it. */
  composite(...args: [...TensorsOf<I>, ...P]): Tensor;
  readonly gradient: Gradient<I, P>;
  readonly cases: FusedCases<P>;
}

/** A fused op that updates its tensor inputs in place and returns nothing. */
export interface InPlaceOp<N extends string, I extends InputNames, P extends readonly unknown[]> {
  readonly kind: 'in-place';
  readonly name: N;
  readonly inputs: I;
  composite(...args: [...TensorsOf<I>, ...P]): void;
  /** In-place updates are never differentiated. */
  readonly gradient: 'none';
  readonly cases: FusedCases<P>;
}

/**
 * Any declared op. Members are methods, so an op with particular parameters is assignable
 * here (method parameters are compared bivariantly); `KernelOf` recovers each op's types.
 */
export type AnyFusedOp =
  | FusedOp<string, InputNames, readonly unknown[]>
  | InPlaceOp<string, InputNames, readonly unknown[]>;

/** Declares a fused op; the `const` inputs keep their names as a tuple. */
export function fusedOp<N extends string, const I extends InputNames, P extends readonly unknown[]>(
  op: Omit<FusedOp<N, I, P>, 'kind'>,
): FusedOp<N, I, P> {
  return { kind: 'returns', ...op };
}

/** Declares an in-place fused op. */
export function inPlaceOp<N extends string, const I extends InputNames, P extends readonly unknown[]>(
  op: Omit<InPlaceOp<N, I, P>, 'kind'>,
): InPlaceOp<N, I, P> {
  return { kind: 'in-place', ...op };
}

/** The kernel type of an op: its tensor inputs as TensorInfo, then its parameters. */
export type KernelOf<O> =
  O extends FusedOp<string, infer I, infer P>
    ? (...args: [...InfosOf<I>, ...P]) => DataId
    : O extends InPlaceOp<string, infer I, infer P>
      ? (...args: [...InfosOf<I>, ...P]) => void
      : never;
