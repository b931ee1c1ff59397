import { assertSameDType } from './dtype';
import { sameBackend } from './guards';
import {
  assertValidShape,
  broadcastShapes,
  normalizeAxis,
  type Shape,
  shapesEqual,
  showShape,
  sizeOf,
} from './shape';
import type { Tensor } from './tensor';

/** Same elements, new shape (one dimension may be -1); no copy. */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  const unknown = shape.filter((d) => d === -1).length;
  if (unknown > 1) throw new Error(`reshape: at most one dimension may be -1, got ${showShape(shape)}`);
  let resolved: number[] = [...shape];
  if (unknown === 1) {
    const known = sizeOf(shape.filter((d) => d !== -1));
    if (known === 0 || x.size % known !== 0) {
      throw new Error(
        `reshape: cannot infer -1 in ${showShape(shape)} for ${x.size} elements of ${showShape(x.shape)}`,
      );
    }
    resolved = shape.map((d) => (d === -1 ? x.size / known : d));
  }
  assertValidShape('reshape', resolved);
  if (sizeOf(resolved) !== x.size) {
    throw new Error(
      `reshape: cannot reshape ${showShape(x.shape)} (${x.size} elements) to ${showShape(resolved)} (${sizeOf(resolved)} elements)`,
    );
  }
  return x.view(resolved);
}

/** Reorders axes: out.shape[i] = x.shape[perm[i]] (a copy). */
export function permute(x: Tensor, perm: readonly number[]): Tensor {
  const normalized = perm.map((p) => (p < 0 ? p + x.rank : p));
  const valid =
    perm.length === x.rank &&
    normalized.every((p) => p >= 0 && p < x.rank) &&
    new Set(normalized).size === x.rank;
  if (!valid) {
    throw new Error(
      `permute: [${perm.join(', ')}] is not a permutation of the ${x.rank} axes of ${showShape(x.shape)}`,
    );
  }
  const outShape = normalized.map((p) => x.shape[p]);
  if (normalized.every((p, i) => p === i)) return x.view(outShape);
  return x.adopt(x.backend.permute(x.info('permute'), normalized), outShape, x.dtype);
}

/** Swaps two axes (a copy). */
export function transpose(x: Tensor, axis1 = -2, axis2 = -1): Tensor {
  const a = normalizeAxis('transpose', axis1, x.rank);
  const b = normalizeAxis('transpose', axis2, x.rank);
  const perm = x.shape.map((_, i) => i);
  perm[a] = b;
  perm[b] = a;
  return permute(x, perm);
}

function checkBox(op: string, shape: Shape, starts: readonly number[], sizes: readonly number[]): void {
  const ok =
    starts.length === shape.length &&
    sizes.length === shape.length &&
    starts.every(
      (s, i) =>
        Number.isInteger(s) &&
        s >= 0 &&
        Number.isInteger(sizes[i]) &&
        sizes[i] >= 0 &&
        s + sizes[i] <= shape[i],
    );
  if (!ok) {
    throw new Error(
      `${op}: region starting at [${starts.join(', ')}] with size [${sizes.join(', ')}] does not fit in ${showShape(shape)}; ` +
        'give one start and one size per axis, inside the tensor',
    );
  }
}

/**
 * Copies a box out of x. `starts` and `sizes` may cover only the leading axes; a size of -1
 * runs to the end of its axis.
 */
export function slice(x: Tensor, starts: readonly number[], sizes: readonly number[]): Tensor {
  const fullStarts = x.shape.map((_, i) => starts[i] ?? 0);
  const fullSizes = x.shape.map((d, i) => {
    const s = sizes[i] ?? -1;
    return s === -1 ? d - fullStarts[i] : s;
  });
  checkBox('slice', x.shape, fullStarts, fullSizes);
  return x.adopt(x.backend.slice(x.info('slice'), fullStarts, fullSizes), fullSizes, x.dtype);
}

/** A copy of x with its own storage. */
export function clone(x: Tensor): Tensor {
  const starts = x.shape.map(() => 0);
  return x.adopt(x.backend.slice(x.info('clone'), starts, x.shape), x.shape, x.dtype);
}

/** Writes src into dst in place, at `starts` (one per axis of dst; src has dst's rank). */
export function writeSlice(dst: Tensor, src: Tensor, starts: readonly number[]): void {
  const backend = sameBackend('writeSlice', dst, src);
  assertSameDType('writeSlice', dst.dtype, src.dtype);
  if (src.rank !== dst.rank) {
    throw new Error(
      `writeSlice: source ${showShape(src.shape)} must have the rank of destination ${showShape(dst.shape)}`,
    );
  }
  checkBox('writeSlice', dst.shape, starts, src.shape);
  backend.writeSlice(dst.info('writeSlice'), src.info('writeSlice'), starts);
}

/** Replaces every value of `target` with those of `source` (same shape), in place. */
export function assign(target: Tensor, source: Tensor): void {
  if (!shapesEqual(target.shape, source.shape)) {
    throw new Error(
      `assign: source ${showShape(source.shape)} must have the shape of target ${showShape(target.shape)}`,
    );
  }
  writeSlice(
    target,
    source,
    target.shape.map(() => 0),
  );
}

/** Joins tensors along `axis`; all other dimensions must match. */
export function concat(tensors: readonly Tensor[], axis = 0): Tensor {
  if (tensors.length === 0) throw new Error('concat: expected at least one tensor, got none');
  const first = tensors[0];
  const backend = sameBackend('concat', ...tensors);
  const a = normalizeAxis('concat', axis, first.rank);
  for (const t of tensors) {
    assertSameDType('concat', first.dtype, t.dtype);
    const same = t.rank === first.rank && t.shape.every((d, i) => i === a || d === first.shape[i]);
    if (!same) {
      throw new Error(
        `concat: shapes ${tensors.map((u) => showShape(u.shape)).join(', ')} differ outside axis ${axis}`,
      );
    }
  }
  const outShape = [...first.shape];
  outShape[a] = tensors.reduce((n, t) => n + t.shape[a], 0);
  const out = first.adopt(backend.fill(sizeOf(outShape), 0, first.dtype), outShape, first.dtype);
  let offset = 0;
  for (const t of tensors) {
    const starts = outShape.map((_, i) => (i === a ? offset : 0));
    backend.writeSlice(out.info('concat'), t.info('concat'), starts);
    offset += t.shape[a];
  }
  return out;
}

/** Copies x broadcast to `shape`. */
export function broadcastTo(x: Tensor, shape: readonly number[]): Tensor {
  const target = broadcastShapes('broadcastTo', x.shape, shape);
  if (!shapesEqual(target, shape)) {
    throw new Error(`broadcastTo: ${showShape(x.shape)} cannot be broadcast to ${showShape(shape)}`);
  }
  const zeros = x.adopt(x.backend.fill(sizeOf(shape), 0, x.dtype), shape, x.dtype);
  const id = x.backend.binary('add', x.info('broadcastTo'), zeros.info('broadcastTo'), shape);
  zeros.dispose();
  return x.adopt(id, shape, x.dtype);
}

/** Inserts a size-1 axis at `axis`. */
export function unsqueeze(x: Tensor, axis: number): Tensor {
  const a = normalizeAxis('unsqueeze', axis, x.rank + 1);
  const shape = [...x.shape];
  shape.splice(a, 0, 1);
  return x.view(shape);
}

/** Removes size-1 axes (all of them, or those listed). */
export function squeeze(x: Tensor, axes?: readonly number[]): Tensor {
  const drop = axes
    ? axes.map((a) => normalizeAxis('squeeze', a, x.rank))
    : x.shape.flatMap((d, i) => (d === 1 ? [i] : []));
  for (const a of drop) {
    if (x.shape[a] !== 1)
      throw new Error(`squeeze: axis ${a} of ${showShape(x.shape)} has size ${x.shape[a]}, not 1`);
  }
  return x.view(x.shape.filter((_, i) => !drop.includes(i)));
}
