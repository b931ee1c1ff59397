import type { ReduceDims } from './backend';
import { assertDType } from './dtype';
import { mul } from './elementwise';
import { permute } from './movement';
import type { ReduceOp } from './primitive-ops';
import { normalizeAxes, normalizeAxis, sizeOf } from './shape';
import type { Tensor } from './tensor';

type Axes = number | readonly number[] | undefined;

function resolveAxes(op: string, x: Tensor, axes: Axes): number[] {
  if (axes === undefined) return x.shape.map((_, i) => i);
  return normalizeAxes(op, typeof axes === 'number' ? [axes] : axes, x.rank);
}

function outShapeOf(x: Tensor, axes: readonly number[], keepDims: boolean): number[] {
  const out: number[] = [];
  x.shape.forEach((d, i) => {
    if (!axes.includes(i)) out.push(d);
    else if (keepDims) out.push(1);
  });
  return out;
}

/**
 * Views x as [outer, size, inner] with the reduced axes in the middle. Non-adjacent axes are
 * first moved to the end with a permute (a copy), which the caller must dispose.
 */
function reductionLayout(x: Tensor, axes: readonly number[]): { input: Tensor; dims: ReduceDims } {
  const first = axes[0];
  const last = axes[axes.length - 1];
  if (last - first + 1 === axes.length) {
    return {
      input: x,
      dims: {
        outer: sizeOf(x.shape.slice(0, first)),
        size: sizeOf(x.shape.slice(first, last + 1)),
        inner: sizeOf(x.shape.slice(last + 1)),
      },
    };
  }
  const kept = x.shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const moved = permute(x, [...kept, ...axes]);
  const size = sizeOf(axes.map((a) => x.shape[a]));
  return { input: moved, dims: { outer: sizeOf(kept.map((a) => x.shape[a])), size, inner: 1 } };
}

function reduceWith(op: ReduceOp, x: Tensor, axes: Axes, keepDims: boolean): Tensor {
  const resolved = resolveAxes(op, x, axes);
  const outShape = outShapeOf(x, resolved, keepDims);
  if (resolved.length === 0) return x.view(outShape);
  if (op === 'max' && resolved.some((a) => x.shape[a] === 0)) {
    throw new Error(`max: cannot reduce over an empty axis (shape [${x.shape.join(', ')}])`);
  }
  const { input, dims } = reductionLayout(x, resolved);
  const id = x.backend.reduce(op, input.info(op), dims);
  if (input !== x) input.dispose();
  return x.adopt(id, outShape, x.dtype);
}

/** Sum over `axes` (all axes when omitted). */
export function sum(x: Tensor, axes?: Axes, keepDims = false): Tensor {
  return reduceWith('sum', x, axes, keepDims);
}

/** Maximum over `axes` (all axes when omitted). */
export function max(x: Tensor, axes?: Axes, keepDims = false): Tensor {
  return reduceWith('max', x, axes, keepDims);
}

/** Mean over `axes` (all axes when omitted); f32 only. */
export function mean(x: Tensor, axes?: Axes, keepDims = false): Tensor {
  assertDType('mean', x.dtype, ['f32']);
  const resolved = resolveAxes('mean', x, axes);
  const count = sizeOf(resolved.map((a) => x.shape[a]));
  const total = sum(x, resolved, keepDims);
  const out = mul(total, 1 / count);
  total.dispose();
  return out;
}

/** Index (i32) of the first maximum along `axis`. */
export function argmax(x: Tensor, axis = -1, keepDims = false): Tensor {
  const a = normalizeAxis('argmax', axis, x.rank);
  if (x.shape[a] === 0) throw new Error(`argmax: axis ${axis} has size 0; nothing to pick from`);
  const dims = {
    outer: sizeOf(x.shape.slice(0, a)),
    size: x.shape[a],
    inner: sizeOf(x.shape.slice(a + 1)),
  };
  const id = x.backend.argmax(x.info('argmax'), dims);
  return x.adopt(id, outShapeOf(x, [a], keepDims), 'i32');
}
