import { type DataId, ones, scope, showShape, type Tensor, zeros } from '@loom/tensor';
import { AutodiffBackend } from './autodiff-backend';
import type { Tape } from './tape';

/** The value of a scalar function and its gradients with respect to the parameters. */
export interface ValueAndGrad {
  readonly value: Tensor;
  /** One gradient per parameter, in order, shaped like it. */
  readonly grads: Tensor[];
}

function backendOf(params: readonly Tensor[]): AutodiffBackend {
  const backend = params[0]?.backend;
  if (!(backend instanceof AutodiffBackend)) {
    throw new Error(
      'valueAndGrad: parameters must live on an AutodiffBackend; create them after ' +
        'setBackend(new AutodiffBackend(new CpuBackend())) or pass { backend } when creating them',
    );
  }
  return backend;
}

/** Walks the tape backwards from `value`, returning the gradient of each watched storage. */
function backward(tape: Tape, value: Tensor, watched: ReadonlySet<DataId>): Map<DataId, Tensor> {
  const grads = new Map<DataId, Tensor>();
  const pending = new Map<DataId, number>();
  for (const node of tape.nodes) pending.set(node.output.id, (pending.get(node.output.id) ?? 0) + 1);
  grads.set(value.info('backward').id, ones([], { backend: value.backend }));
  for (let i = tape.nodes.length - 1; i >= 0; i--) {
    const node = tape.nodes[i];
    const outId = node.output.id;
    const g = grads.get(outId);
    if (g) {
      const needs = node.inputs.map((input) => tape.requiresGrad.has(input.id));
      const inputGrads = scope(() => node.backward(g.reshape(node.output.shape), needs));
      inputGrads.forEach((gi, j) => {
        if (!gi) return;
        const input = node.inputs[j];
        if (!tape.requiresGrad.has(input.id)) {
          gi.dispose();
          return;
        }
        const shaped = gi.reshape(input.shape);
        gi.dispose();
        const previous = grads.get(input.id);
        if (previous) {
          grads.set(
            input.id,
            scope(() => previous.reshape(input.shape).add(shaped)),
          );
          previous.dispose();
          shaped.dispose();
        } else {
          grads.set(input.id, shaped);
        }
      });
    }
    const left = (pending.get(outId) ?? 1) - 1;
    pending.set(outId, left);
    if (left === 0 && !watched.has(outId)) {
      grads.get(outId)?.dispose();
      grads.delete(outId);
    }
  }
  return grads;
}

/**
 * Runs `fn` (synchronously, inside a scope) recording the ops that depend on `params`, then
 * computes the gradient of its scalar result with respect to each parameter. Returns the
 * value and one gradient per parameter; the caller disposes them.
 */
export function valueAndGrad(fn: () => Tensor, params: readonly Tensor[]): ValueAndGrad {
  if (params.length === 0) throw new Error('valueAndGrad: expected at least one parameter, got none');
  const backend = backendOf(params);
  const infos = params.map((p) => p.info('valueAndGrad'));
  const tape = backend.openTape(infos);
  const value = recordForward(backend, fn);
  try {
    if (value.size !== 1 || value.dtype !== 'f32') {
      throw new Error(
        `valueAndGrad: the function must return a scalar f32 loss, got ${value.dtype} of shape ${showShape(value.shape)}`,
      );
    }
    const grads = backward(tape, value, new Set(infos.map((p) => p.id)));
    const out = params.map((p, i) => grads.get(infos[i].id)?.reshape(p.shape) ?? zeros(p.shape, { backend }));
    for (const g of grads.values()) g.dispose();
    return { value, grads: out };
  } catch (err) {
    value.dispose();
    throw err;
  } finally {
    backend.closeTape();
  }
}

function recordForward(backend: AutodiffBackend, fn: () => Tensor): Tensor {
  try {
    return scope(fn);
  } catch (err) {
    backend.pauseTape();
    backend.closeTape();
    throw err;
  } finally {
    if (backend.tape) backend.pauseTape();
  }
}
