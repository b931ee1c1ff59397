import type { Backend } from '../backend';
import type { Tensor } from '../tensor';
import type { AnyFusedOp, FusedOp, InfosOf, InPlaceOp, InputNames, KernelOf, TensorsOf } from './op';

/**
 * Which implementation a fused op runs: `'auto'` takes the backend's kernel where it has
 * one and the composite otherwise; `'composite'` always runs the composite (the conformance
 * kit compares the two this way). It applies to this call only: ops inside the composite
 * dispatch on their own.
 */
export type FusedPath = 'auto' | 'composite';

/**
 * The backend's kernel for `op`, if it has one. `Backend.fused` is keyed by op name and
 * typed per op from the op table (`FusedKernels`), so the kernel under `op.name` has the
 * op's kernel type; this is the one place that reads it by name.
 */
export function kernelOf<O extends AnyFusedOp>(backend: Backend, op: O): KernelOf<O> | undefined {
  const kernels: Readonly<Record<string, unknown>> = backend.fused;
  return kernels[op.name] as KernelOf<O> | undefined;
}

function infosOf<I extends InputNames>(op: string, inputs: TensorsOf<I>): InfosOf<I> {
  return inputs.map((t) => t.info(op)) as unknown as InfosOf<I>;
}

/** Runs a fused op that returns a tensor: the backend's kernel or the composite (see FusedPath). */
export function runFused<N extends string, I extends InputNames, P extends readonly unknown[]>(
  op: FusedOp<N, I, P>,
  inputs: TensorsOf<I>,
  params: P,
  path: FusedPath = 'auto',
): Tensor {
  const kernel = path === 'composite' ? undefined : kernelOf(inputs[0].backend, op);
  if (kernel === undefined) return op.composite(...inputs, ...params);
  const infos = infosOf(op.name, inputs);
  const id = kernel(...infos, ...params);
  return inputs[0].adopt(id, op.outputShape(infos, params), 'f32');
}

/** Runs a fused op that updates its inputs in place: the backend's kernel or the composite. */
export function runFusedInPlace<N extends string, I extends InputNames, P extends readonly unknown[]>(
  op: InPlaceOp<N, I, P>,
  inputs: TensorsOf<I>,
  params: P,
  path: FusedPath = 'auto',
): void {
  const kernel = path === 'composite' ? undefined : kernelOf(inputs[0].backend, op);
  if (kernel === undefined) op.composite(...inputs, ...params);
  else kernel(...infosOf(op.name, inputs), ...params);
}
