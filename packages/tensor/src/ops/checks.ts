import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';

/** Throws unless `param` is [d] for the last axis d of `x`, naming the op and the parameter. */
export function lastDimMatches(op: string, x: Tensor, param: Tensor, name: string): void {
  const d = x.shape[x.rank - 1];
  if (param.rank !== 1 || param.shape[0] !== d) {
    throw new Error(
      `${op}: ${name} must have shape [${d}] to match input ${showShape(x.shape)}, got ${showShape(param.shape)}`,
    );
  }
}

/** Throws unless `b` has the shape of `a`, naming the op and both inputs. */
export function sameShape(op: string, aName: string, a: Tensor, bName: string, b: Tensor): void {
  if (!shapesEqual(a.shape, b.shape)) {
    throw new Error(
      `${op}: ${aName} ${showShape(a.shape)} and ${bName} ${showShape(b.shape)} must have the same shape`,
    );
  }
}

/** Checks the inputs of a norm's backward kernel: x [..., d], weight [d], grad like x. */
export function checkNormGrad(op: string, x: Tensor, weight: Tensor, grad: Tensor): void {
  sameBackend(op, x, weight, grad);
  assertDType(op, x.dtype, ['f32']);
  lastDimMatches(op, x, weight, 'weight');
  sameShape(op, 'x', x, 'grad', grad);
}

/** Sums a gradient [..., d] over all rows, giving [d] (the gradient of a per-column weight). */
export function sumRows(t: Tensor): Tensor {
  return t.reshape([-1, t.shape[t.rank - 1]]).sum(0); // [d]
}
