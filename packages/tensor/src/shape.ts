/** A tensor's dimensions, outermost first. A scalar has shape []. */
export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar). */
export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major (C-order) strides of a shape, in elements. */
export function stridesOf(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/** Formats a shape for error messages: `[2, 3]`. */
export function showShape(shape: Shape): string {
  return `[${shape.join(', ')}]`;
}

/** Throws unless every dimension is a non-negative integer. */
export function assertValidShape(op: string, shape: Shape): void {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new Error(`${op}: invalid shape ${showShape(shape)}; dimensions must be non-negative integers`);
    }
  }
}

/** Resolves a possibly negative axis against a rank, naming the op on error. */
export function normalizeAxis(op: string, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank) {
    throw new Error(`${op}: axis ${axis} is out of range for a tensor of rank ${rank}`);
  }
  return a;
}

/** Resolves, deduplicates and sorts a list of axes. */
export function normalizeAxes(op: string, axes: readonly number[], rank: number): number[] {
  const out = [...new Set(axes.map((a) => normalizeAxis(op, a, rank)))];
  return out.sort((x, y) => x - y);
}

/** Whether two shapes are equal. */
export function shapesEqual(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * NumPy-style broadcast of two or more shapes: dimensions are aligned from the right
 * and must be equal or 1. Throws naming the op and every shape.
 */
export function broadcastShapes(op: string, ...shapes: Shape[]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const shape of shapes) {
    const offset = rank - shape.length;
    for (let i = 0; i < shape.length; i++) {
      const d = shape[i];
      const o = out[offset + i];
      if (d === o || d === 1) continue;
      if (o === 1) {
        out[offset + i] = d;
        continue;
      }
      throw new Error(
        `${op}: shapes ${shapes.map(showShape).join(' and ')} cannot be broadcast together (dimension ${offset + i} differs)`,
      );
    }
  }
  return out;
}

/**
 * Strides of `shape` when read as if broadcast to `outShape`: broadcast dimensions get stride 0.
 * The result has the rank of `outShape`.
 */
export function broadcastStrides(shape: Shape, outShape: Shape): number[] {
  const strides = stridesOf(shape);
  const offset = outShape.length - shape.length;
  const out = new Array<number>(outShape.length).fill(0);
  for (let i = 0; i < shape.length; i++) out[offset + i] = shape[i] === 1 ? 0 : strides[i];
  return out;
}
