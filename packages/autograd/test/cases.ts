import {
  type AnyFusedOp,
  attention,
  type Backend,
  binary,
  binaryOps,
  concat,
  type Distribution,
  type FusedCase,
  fusedOps,
  gather,
  type HalfType,
  type InputNames,
  layernorm,
  logSoftmax,
  matmul,
  max,
  mean,
  normalAt,
  packHalves,
  permute,
  rmsnorm,
  rope,
  runFused,
  scatterAdd,
  sizeOf,
  slice,
  softmax,
  softmaxCrossEntropy,
  sum,
  swiglu,
  type Tensor,
  type TensorsOf,
  tensor,
  type UnaryOp,
  unary,
  unaryOps,
  where,
} from '@loom/tensor';

/** A scalar function of seeded inputs whose gradient is checked. */
export interface GradCase {
  readonly name: string;
  readonly inputs: readonly { shape: number[]; kind?: 'positive' | 'ids' | HalfType; high?: number }[];
  readonly fn: (xs: Tensor[]) => Tensor;
}

/** A fixed random projection makes every output element matter with a different weight. */
function project(t: Tensor): Tensor {
  const w = tensor(
    Array.from({ length: t.size }, (_, i) => normalAt(99, i)),
    t.shape,
    { backend: t.backend },
  );
  return sum(t.mul(w));
}

const positive: UnaryOp[] = ['log', 'sqrt', 'rsqrt', 'recip'];

export const gradCases: GradCase[] = [
  ...unaryOps.map((op) => ({
    name: op,
    inputs: [{ shape: [3, 4], kind: positive.includes(op) ? ('positive' as const) : undefined }],
    fn: ([x]: Tensor[]) => project(unary(op, x)),
  })),
  ...binaryOps.map((op) => ({
    name: `${op} with broadcasting`,
    inputs: [
      { shape: [2, 3, 4], kind: op === 'pow' ? ('positive' as const) : undefined },
      { shape: [3, 1], kind: op === 'div' || op === 'pow' ? ('positive' as const) : undefined },
    ],
    fn: ([a, b]: Tensor[]) => project(binary(op, a, b)),
  })),
  {
    name: 'where',
    inputs: [{ shape: [3, 4] }, { shape: [4] }],
    fn: ([a, b]) => project(where(a.gt(0), a, b)),
  },
  { name: 'sum over axes', inputs: [{ shape: [2, 3, 4] }], fn: ([x]) => project(sum(x, [0, 2])) },
  { name: 'mean', inputs: [{ shape: [2, 3, 4] }], fn: ([x]) => project(mean(x, 1, true)) },
  { name: 'max', inputs: [{ shape: [3, 5] }], fn: ([x]) => project(max(x, 1)) },
  { name: 'matmul', inputs: [{ shape: [3, 4] }, { shape: [4, 5] }], fn: ([a, b]) => project(matmul(a, b)) },
  {
    name: 'matmul transA transB',
    inputs: [{ shape: [4, 3] }, { shape: [5, 4] }],
    fn: ([a, b]) => project(matmul(a, b, { transA: true, transB: true })),
  },
  {
    name: 'matmul batched with a shared right side',
    inputs: [{ shape: [2, 3, 4] }, { shape: [5, 4] }],
    fn: ([a, b]) => project(matmul(a, b, { transB: true })),
  },
  {
    name: 'matmul broadcast batch',
    inputs: [{ shape: [2, 1, 3, 4] }, { shape: [3, 4, 2] }],
    fn: ([a, b]) => project(matmul(a, b)),
  },
  { name: 'permute', inputs: [{ shape: [2, 3, 4] }], fn: ([x]) => project(permute(x, [2, 0, 1])) },
  { name: 'slice', inputs: [{ shape: [4, 5] }], fn: ([x]) => project(slice(x, [1, 2], [2, 3])) },
  {
    name: 'concat',
    inputs: [{ shape: [2, 3] }, { shape: [2, 2] }],
    fn: ([a, b]) => project(concat([a, b.mul(b)], 1)),
  },
  {
    name: 'reshape',
    inputs: [{ shape: [2, 6] }],
    fn: ([x]) => project(x.reshape([3, 4]).mul(x.reshape([3, 4]))),
  },
  {
    name: 'gather with repeated ids',
    inputs: [{ shape: [5, 3] }, { shape: [4], kind: 'ids', high: 4 }],
    fn: ([t, ids]) => project(gather(t, ids)),
  },
  {
    name: 'scatterAdd',
    inputs: [{ shape: [4, 3] }, { shape: [4], kind: 'ids', high: 2 }],
    fn: ([s, ids]) => project(scatterAdd(s, ids, 3)),
  },
  { name: 'softmax', inputs: [{ shape: [3, 5] }], fn: ([x]) => project(softmax(x)) },
  { name: 'logSoftmax', inputs: [{ shape: [3, 5] }], fn: ([x]) => project(logSoftmax(x)) },
  { name: 'rmsnorm', inputs: [{ shape: [3, 6] }, { shape: [6] }], fn: ([x, w]) => project(rmsnorm(x, w)) },
  {
    name: 'layernorm',
    inputs: [{ shape: [3, 6] }, { shape: [6] }, { shape: [6] }],
    fn: ([x, w, b]) => project(layernorm(x, w, b)),
  },
  { name: 'rope', inputs: [{ shape: [1, 3, 2, 4] }], fn: ([x]) => project(rope(x, { offset: 2 })) },
  {
    name: 'rope with a scaled table',
    inputs: [{ shape: [2, 3, 2, 6] }],
    fn: ([x]) => project(rope(x, { offset: 5, inverseFrequencies: [1, 0.09, 0.004], scale: 1.2 })),
  },
  { name: 'swiglu', inputs: [{ shape: [2, 5] }, { shape: [2, 5] }], fn: ([g, u]) => project(swiglu(g, u)) },
  {
    name: 'attention with grouped heads',
    inputs: [{ shape: [1, 3, 4, 2] }, { shape: [1, 3, 2, 2] }, { shape: [1, 3, 2, 2] }],
    fn: ([q, k, v]) => project(attention(q, k, v)),
  },
  {
    name: 'attention, prefix LM (prefix 3 of 5)',
    inputs: [{ shape: [1, 5, 2, 2] }, { shape: [1, 5, 1, 2] }, { shape: [1, 5, 1, 2] }],
    fn: ([q, k, v]) => project(attention(q, k, v, { mask: { kind: 'prefix', length: 3 } })),
  },
  {
    name: 'attention, sliding window 2 after 2 cached keys',
    inputs: [{ shape: [1, 3, 2, 2] }, { shape: [1, 5, 2, 2] }, { shape: [1, 5, 2, 2] }],
    fn: ([q, k, v]) => project(attention(q, k, v, { window: 2 })),
  },
  {
    name: 'attention, bidirectional with key padding and an empty row',
    inputs: [{ shape: [3, 3, 2, 2] }, { shape: [3, 4, 1, 2] }, { shape: [3, 4, 1, 2] }],
    fn: ([q, k, v]) => project(attention(q, k, v, { mask: { kind: 'none' }, keyLengths: [4, 2, 0] })),
  },
  {
    name: 'softmaxCrossEntropy with an ignored row',
    inputs: [{ shape: [4, 6] }, { shape: [4], kind: 'ids', high: 5 }],
    fn: ([logits, t]) => softmaxCrossEntropy(logits, t.sub(t.eq(3).mul(t.add(100))), -100),
  },
];

/** Seeded inputs for a case on `backend`. */
export function caseInputs(backend: Backend, c: GradCase, seed: number): Tensor[] {
  return c.inputs.map((spec, i) => {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    if (spec.kind === 'ids') {
      const ids = Array.from({ length: n }, (_, j) => (j * 7 + seed) % ((spec.high ?? 1) + 1));
      return tensor(ids, spec.shape, { backend, dtype: 'i32' });
    }
    if (spec.kind === 'f16' || spec.kind === 'bf16') {
      // Words of two 16-bit floats (a HalfWeight's packing), normal values of scale 0.1.
      const values = Float32Array.from({ length: 2 * n }, (_, j) => 0.1 * normalAt(seed * 17 + i, j));
      return tensor(packHalves(spec.kind, values), spec.shape, { backend, dtype: 'i32' });
    }
    const values = Array.from({ length: n }, (_, j) => {
      const v = normalAt(seed * 17 + i, j);
      return spec.kind === 'positive' ? 0.5 + Math.abs(v) : v;
    });
    return tensor(values, spec.shape, { backend });
  });
}

/** The case of `op` checked by gradcheck: the smallest whose first input has at least 8 elements. */
function gradcheckCase(op: AnyFusedOp): FusedCase<readonly unknown[]> {
  const size = (c: FusedCase<readonly unknown[]>): number => sizeOf(c.inputs[0].shape);
  const large = op.cases.filter((c) => size(c) >= 8);
  return (large.length > 0 ? large : [...op.cases]).reduce((a, b) => (size(b) < size(a) ? b : a));
}

/** The fused ops of the table that autograd records with a backward rule of their own. */
export const recordedOps: readonly AnyFusedOp[] = (Object.values(fusedOps) as AnyFusedOp[]).filter(
  (op) => op.kind === 'returns' && typeof op.gradient === 'object',
);

/** How a gradcheck input is drawn for a conformance input drawn from `dist`. */
function gradKind(dist: Distribution | undefined): 'positive' | 'ids' | HalfType | undefined {
  switch (dist?.kind) {
    case 'ints':
      return 'ids';
    case 'positive':
      return 'positive';
    case 'halves':
      return dist.type;
    default:
      return undefined;
  }
}

/** One gradcheck case per recorded fused op, from its conformance cases, run through the dispatcher. */
export const fusedGradCases: GradCase[] = recordedOps.map((op) => {
  const c = gradcheckCase(op);
  return {
    name: `fused ${op.name} ${c.label}`,
    inputs: c.inputs.map((spec) => ({
      shape: [...spec.shape],
      kind: gradKind(spec.dist),
      high: spec.dist?.kind === 'ints' ? spec.dist.high : undefined,
    })),
    fn: (xs) => {
      if (op.kind !== 'returns') throw new Error(`${op.name}: an in-place op has no gradient`);
      return project(runFused(op, xs as unknown as TensorsOf<InputNames>, c.params));
    },
  };
});
