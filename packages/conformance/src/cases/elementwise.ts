import * as ops from '@loom/tensor';
import { binaryOps, cast, compareOps, type Tensor, type UnaryOp, unaryOps, where } from '@loom/tensor';
import type { OpGroup } from '../case';
import type { Distribution } from '../inputs';
import { BROADCAST_PAIRS, TENSOR_SHAPES, VECTOR_SIZES } from '../shapes';
import { ELEMENTWISE, EXACT, TRIG } from '../tolerance';

const PI = Math.PI;

function unaryDist(op: UnaryOp): Distribution {
  switch (op) {
    case 'log':
    case 'sqrt':
    case 'rsqrt':
    case 'recip':
      return { kind: 'positive' };
    case 'sin':
    case 'cos':
      return { kind: 'uniform', low: -PI, high: PI };
    default:
      return { kind: 'normal', scale: 3 };
  }
}

const allShapes = [...VECTOR_SIZES.map((n) => [n]), ...TENSOR_SHAPES];

export const unaryGroups: OpGroup[] = unaryOps.map((op) => ({
  op,
  cases: [
    ...allShapes.map((shape) => ({
      name: `${op} [${shape.join(', ')}]`,
      inputs: [{ shape, dist: unaryDist(op) }],
      run: ([x]: Tensor[]) => ops.unary(op, x),
      tol: op === 'sin' || op === 'cos' ? TRIG : ELEMENTWISE,
    })),
    ...(op === 'neg' || op === 'abs'
      ? [
          {
            name: `${op} i32 [257]`,
            inputs: [{ shape: [257], dist: { kind: 'ints', low: -1000, high: 1000 } as const }],
            run: ([x]: Tensor[]) => ops.unary(op, x),
            tol: EXACT,
          },
        ]
      : []),
  ],
}));

export const binaryGroups: OpGroup[] = binaryOps.map((op) => {
  const left: Distribution = op === 'pow' ? { kind: 'positive' } : { kind: 'normal' };
  const right: Distribution = op === 'div' ? { kind: 'positive' } : { kind: 'normal' };
  const pairs = [...BROADCAST_PAIRS, ...VECTOR_SIZES.map((n) => [[n], [n]] as const)];
  const intCases =
    op === 'pow'
      ? []
      : [
          {
            name: `${op} i32 [5, 7] x [7]`,
            inputs: [
              { shape: [5, 7], dist: { kind: 'ints', low: -50, high: 50 } as const },
              { shape: [7], dist: { kind: 'ints', low: -4, high: 4 } as const },
            ],
            run: ([a, b]: Tensor[]) => ops.binary(op, a, b),
            tol: EXACT,
          },
        ];
  return {
    op,
    cases: [
      ...pairs.map(([a, b]) => ({
        name: `${op} [${a.join(', ')}] x [${b.join(', ')}]`,
        inputs: [
          { shape: a, dist: left },
          { shape: b, dist: right },
        ],
        run: ([x, y]: Tensor[]) => ops.binary(op, x, y),
        tol: ELEMENTWISE,
      })),
      {
        name: `${op} with a number`,
        inputs: [{ shape: [65], dist: left }],
        run: ([x]: Tensor[]) => ops.binary(op, x, 1.5),
        tol: ELEMENTWISE,
      },
      ...intCases,
    ],
  };
});

/** Small integers stored as f32, so that equal values occur. */
const smallInts: Distribution = { kind: 'ints', low: -2, high: 2 };

export const compareGroups: OpGroup[] = compareOps.map((op) => ({
  op,
  cases: [
    ...BROADCAST_PAIRS.map(([a, b]) => ({
      name: `${op} [${a.join(', ')}] x [${b.join(', ')}]`,
      inputs: [
        { shape: a, dtype: 'f32' as const, dist: smallInts },
        { shape: b, dtype: 'f32' as const, dist: smallInts },
      ],
      run: ([x, y]: Tensor[]) => ops.compare(op, x, y),
      tol: EXACT,
    })),
    {
      name: `${op} i32 [300]`,
      inputs: [
        { shape: [300], dist: smallInts },
        { shape: [300], dist: smallInts },
      ],
      run: ([x, y]: Tensor[]) => ops.compare(op, x, y),
      tol: EXACT,
    },
  ],
}));

export const whereGroup: OpGroup = {
  op: 'where',
  cases: [
    [[5], [5], [5]],
    [
      [3, 1],
      [1, 4],
      [3, 4],
    ],
    [[4], [3, 4], []],
    [[2, 1, 65], [2, 3, 65], [65]],
    [[1000], [1000], [1000]],
  ].map(([c, a, b]) => ({
    name: `where [${c.join(', ')}] ? [${a.join(', ')}] : [${b.join(', ')}]`,
    inputs: [{ shape: c, dist: { kind: 'ints', low: 0, high: 1 } }, { shape: a }, { shape: b }],
    run: ([cond, x, y]: Tensor[]) => where(cond, x, y),
    tol: EXACT,
  })),
};

export const castGroup: OpGroup = {
  op: 'cast',
  cases: [
    {
      name: 'cast f32 -> i32 truncates toward zero',
      inputs: [{ shape: [1000], dist: { kind: 'normal', scale: 50 } }],
      run: ([x]: Tensor[]) => cast(x, 'i32'),
      tol: EXACT,
    },
    {
      name: 'cast i32 -> f32',
      inputs: [{ shape: [3, 65], dist: { kind: 'ints', low: -100000, high: 100000 } }],
      run: ([x]: Tensor[]) => cast(x, 'f32'),
      tol: EXACT,
    },
  ],
};
