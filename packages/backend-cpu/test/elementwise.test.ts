import { type BinaryOp, broadcastShapes, type Shape, sizeOf } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { type BinaryOperand, binaryKernel } from '../src/binary';
import { CpuStorage } from '../src/storage';
import { wasmRuntime } from '../src/wasm/runtime';
import { SETTINGS } from './wasm-for-tests';

const OPS: readonly BinaryOp[] = ['add', 'sub', 'mul', 'div', 'max', 'min', 'pow'];
const SPECIALS = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-40, -3e38];

/** Shapes of a and b whose runs have steps (1, 1), (1, 0), (0, 1) and (0, 0), for run length n. */
function shapePairs(n: number): [Shape, Shape][] {
  return [
    [[n], [n]],
    [[n], [1]],
    [[1], [n]],
    [[3, n], [n]],
    [
      [3, n],
      [3, 1],
    ],
    [
      [3, 1],
      [3, n],
    ],
    [
      [3, 1],
      [3, 1, n],
    ],
    [
      [2, 3, 1],
      [2, 1, n],
    ],
  ];
}

let seed = 1;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function randomData(length: number): Float32Array {
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    data[i] = random() < 0.05 ? SPECIALS[Math.floor(random() * SPECIALS.length)] : (random() - 0.5) * 20;
  }
  return data;
}

function hostOperand(values: Float32Array): BinaryOperand {
  return { values, address: undefined };
}

function heapOperand(values: Float32Array): CpuStorage {
  const storage = new CpuStorage('f32', values.length);
  storage.f32.set(values);
  return storage;
}

/** Index of the first element where the arrays differ (NaN equals NaN, -0 differs from 0), or -1. */
function firstDifference(x: Float32Array, y: Float32Array): number {
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return i;
  return -1;
}

function compare(
  op: BinaryOp,
  aShape: Shape,
  bShape: Shape,
  heap: readonly [boolean, boolean, boolean],
): void {
  const outShape = broadcastShapes('test', aShape, bShape);
  const a = randomData(sizeOf(aShape));
  const b = randomData(sizeOf(bShape));
  const expected = new Float32Array(sizeOf(outShape));
  binaryKernel(
    SETTINGS,
    op,
    'f32',
    hostOperand(a),
    aShape,
    hostOperand(b),
    bShape,
    hostOperand(expected),
    outShape,
  );
  const aOp = heap[0] ? heapOperand(a) : hostOperand(a);
  const bOp = heap[1] ? heapOperand(b) : hostOperand(b);
  const out = heap[2]
    ? new CpuStorage('f32', expected.length)
    : hostOperand(new Float32Array(expected.length));
  binaryKernel(SETTINGS, op, 'f32', aOp, aShape, bOp, bShape, out, outShape);
  const actual = Float32Array.from(out.values);
  for (const o of [aOp, bOp, out]) if (o instanceof CpuStorage) o.free();
  const at = firstDifference(actual, expected);
  expect(
    at,
    `${op} [${aShape}] ⊕ [${bShape}] at ${at}: ${actual[at]} vs ${expected[at]} (heap ${heap})`,
  ).toBe(-1);
}

describe('f32 binary kernels in WebAssembly', () => {
  it('run in the heap here', () => {
    expect(wasmRuntime()).toBeDefined();
    expect(new CpuStorage('f32', 4).address).toBeDefined();
  });

  it('match the JavaScript path for every op, step pattern and length 1..37', () => {
    for (const op of OPS) {
      for (let n = 1; n <= 37; n++) {
        for (const [aShape, bShape] of shapePairs(n)) compare(op, aShape, bShape, [true, true, true]);
      }
    }
  });

  it('match an index-by-index broadcast reference, in the heap and off it', () => {
    const pairs: [Shape, Shape][] = [
      [[4, 5, 6], [6]],
      [
        [4, 5, 6],
        [5, 1],
      ],
      [
        [4, 1, 6],
        [1, 5, 1],
      ],
      [
        [2, 3, 4, 5],
        [3, 1, 5],
      ],
      [
        [2, 1, 4, 1],
        [1, 3, 1, 5],
      ],
      [[7], [1]],
      [[], [3]],
    ];
    for (const [aShape, bShape] of pairs) {
      const outShape = broadcastShapes('test', aShape, bShape);
      const a = randomData(sizeOf(aShape));
      const b = randomData(sizeOf(bShape));
      const expected = new Float32Array(sizeOf(outShape));
      const index = outShape.map(() => 0);
      /** The element of an input of `shape` (aligned to the output's last axes) at the output's index. */
      const at = (shape: Shape) =>
        shape.reduce((offset, size, axis) => {
          const i = index[axis + outShape.length - shape.length];
          return offset * size + (size === 1 ? 0 : i);
        }, 0);
      for (let o = 0; o < expected.length; o++) {
        expected[o] = a[at(aShape)] - b[at(bShape)];
        for (let axis = outShape.length - 1; axis >= 0; axis--) {
          if (++index[axis] < outShape[axis]) break;
          index[axis] = 0;
        }
      }
      for (const heap of [true, false]) {
        const [aOp, bOp] = heap ? [heapOperand(a), heapOperand(b)] : [hostOperand(a), hostOperand(b)];
        const out = heap
          ? new CpuStorage('f32', expected.length)
          : hostOperand(new Float32Array(expected.length));
        binaryKernel(SETTINGS, 'sub', 'f32', aOp, aShape, bOp, bShape, out, outShape);
        const actual = Float32Array.from(out.values);
        for (const x of [aOp, bOp, out]) if (x instanceof CpuStorage) x.free();
        const first = firstDifference(actual, expected);
        expect(first, `[${aShape}] - [${bShape}] at ${first} (heap ${heap})`).toBe(-1);
      }
    }
  });

  it('match the JavaScript path on long runs', () => {
    for (const op of OPS) {
      for (const [aShape, bShape] of shapePairs(4099)) compare(op, aShape, bShape, [true, true, true]);
    }
  });

  it('fall back to JavaScript when an operand is off the heap', () => {
    const mixes: [boolean, boolean, boolean][] = [
      [false, true, true],
      [true, false, true],
      [true, true, false],
      [false, false, false],
    ];
    for (const op of OPS) {
      for (const heap of mixes) {
        for (const [aShape, bShape] of shapePairs(53)) compare(op, aShape, bShape, heap);
      }
    }
  });

  it('keeps i32 arithmetic in JavaScript', () => {
    const a = new CpuStorage('i32', 40);
    const b = new CpuStorage('i32', 40);
    const out = new CpuStorage('i32', 40);
    a.i32.set(Array.from({ length: 40 }, (_, i) => 7 * i - 100));
    b.i32.set(Array.from({ length: 40 }, (_, i) => (i % 5) - 2));
    binaryKernel(SETTINGS, 'div', 'i32', a, [40], b, [40], out, [40]);
    const expected = Array.from({ length: 40 }, (_, i) => {
      const y = (i % 5) - 2;
      return y === 0 ? 7 * i - 100 : Math.trunc((7 * i - 100) / y);
    });
    expect(Array.from(out.i32)).toEqual(expected);
    for (const s of [a, b, out]) s.free();
  });
});
