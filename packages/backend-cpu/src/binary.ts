import {
  type BinaryOp,
  broadcastStrides,
  type CompareOp,
  type DType,
  type HostArray,
  type Shape,
} from '@loom/tensor';

type Fn = (a: number, b: number) => number;

function intDiv(a: number, b: number): number {
  return b === 0 ? a : Math.trunc(a / b);
}

/** Scalar function of each binary op per dtype (i32 results wrap like 32-bit integers). */
export function binaryFn(op: BinaryOp, dtype: DType): Fn {
  const int = dtype === 'i32';
  switch (op) {
    case 'add':
      return (a, b) => a + b;
    case 'sub':
      return (a, b) => a - b;
    case 'mul':
      return int ? Math.imul : (a, b) => a * b;
    case 'div':
      return int ? intDiv : (a, b) => a / b;
    case 'pow':
      return Math.pow;
    case 'max':
      return (a, b) => (a > b || Number.isNaN(a) ? a : b);
    case 'min':
      return (a, b) => (a < b || Number.isNaN(a) ? a : b);
  }
}

export const compareFns: Readonly<Record<CompareOp, Fn>> = {
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};

/**
 * Visits every element of `outShape` in row-major order, calling `visit(outIndex, offsets)`
 * with the offset of that element in each broadcast input.
 */
export function forEachBroadcast(
  outShape: Shape,
  inputs: readonly Shape[],
  visit: (i: number, offsets: Int32Array) => void,
): void {
  const rank = outShape.length;
  const strides = inputs.map((s) => broadcastStrides(s, outShape));
  const offsets = new Int32Array(inputs.length);
  const index = new Int32Array(rank);
  let total = 1;
  for (const d of outShape) total *= d;
  for (let i = 0; i < total; i++) {
    visit(i, offsets);
    for (let axis = rank - 1; axis >= 0; axis--) {
      index[axis]++;
      for (let j = 0; j < strides.length; j++) offsets[j] += strides[j][axis];
      if (index[axis] < outShape[axis]) break;
      for (let j = 0; j < strides.length; j++) offsets[j] -= strides[j][axis] * outShape[axis];
      index[axis] = 0;
    }
  }
}

/** out = fn(a, b) with broadcasting; fast paths for equal shapes and a scalar operand. */
export function broadcastBinary(
  fn: Fn,
  a: HostArray,
  aShape: Shape,
  b: HostArray,
  bShape: Shape,
  out: HostArray,
  outShape: Shape,
): void {
  const n = out.length;
  if (a.length === n && b.length === n) {
    for (let i = 0; i < n; i++) out[i] = fn(a[i], b[i]);
  } else if (a.length === n && b.length === 1) {
    const y = b[0];
    for (let i = 0; i < n; i++) out[i] = fn(a[i], y);
  } else if (b.length === n && a.length === 1) {
    const x = a[0];
    for (let i = 0; i < n; i++) out[i] = fn(x, b[i]);
  } else {
    forEachBroadcast(outShape, [aShape, bShape], (i, o) => {
      out[i] = fn(a[o[0]], b[o[1]]);
    });
  }
}
