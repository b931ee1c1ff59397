import {
  adamw,
  attention,
  clone,
  concat,
  geluGrad,
  layernorm,
  layernormGrad,
  logSoftmax,
  rmsnorm,
  rmsnormGrad,
  rope,
  softmax,
  softmaxCrossEntropy,
  swiglu,
  type Tensor,
} from '@loom/tensor';
import type { OpGroup } from '../case';
import { ELEMENTWISE, REDUCTION } from '../tolerance';

const rowShapes: readonly (readonly number[])[] = [
  [1, 1],
  [3, 7],
  [4, 64],
  [5, 65],
  [2, 3, 288],
  [1, 32_000],
  [3, 1000],
];

interface AttentionCase {
  readonly b: number;
  readonly t: number;
  readonly s: number;
  readonly h: number;
  readonly hkv: number;
  readonly hd: number;
  readonly causal?: boolean;
  readonly label: string;
}

const attentionCases: readonly AttentionCase[] = [
  { b: 1, t: 1, s: 1, h: 1, hkv: 1, hd: 4, label: 'single token' },
  { b: 2, t: 7, s: 7, h: 4, hkv: 4, hd: 16, label: 'multi-head prefill' },
  { b: 1, t: 9, s: 9, h: 8, hkv: 4, hd: 8, label: 'grouped-query prefill' },
  { b: 2, t: 5, s: 5, h: 6, hkv: 1, hd: 12, label: 'multi-query prefill' },
  { b: 1, t: 1, s: 37, h: 8, hkv: 4, hd: 8, label: 'decode one token after 36 cached (offset 36)' },
  { b: 2, t: 3, s: 20, h: 6, hkv: 2, hd: 48, label: 'three queries after 17 cached keys' },
  { b: 1, t: 130, s: 130, h: 4, hkv: 2, hd: 32, label: 'long prefill' },
  { b: 1, t: 257, s: 257, h: 2, hkv: 1, hd: 64, label: 'prefill past a workgroup of 256' },
  { b: 2, t: 6, s: 11, h: 4, hkv: 2, hd: 16, causal: false, label: 'non-causal cross attention' },
];

export const fusedGroups: OpGroup[] = [
  {
    op: 'softmax',
    cases: [
      ...rowShapes.map((shape) => ({
        name: `softmax [${shape.join(', ')}]`,
        inputs: [{ shape, dist: { kind: 'normal', scale: 4 } as const }],
        run: ([x]: Tensor[]) => softmax(x),
        tol: REDUCTION,
        fused: true,
      })),
      {
        name: 'softmax over axis 0 of [65, 3]',
        inputs: [{ shape: [65, 3] }],
        run: ([x]: Tensor[]) => softmax(x, 0),
        tol: REDUCTION,
      },
    ],
  },
  {
    op: 'logSoftmax',
    cases: rowShapes.map((shape) => ({
      name: `logSoftmax [${shape.join(', ')}]`,
      inputs: [{ shape, dist: { kind: 'normal', scale: 4 } as const }],
      run: ([x]: Tensor[]) => logSoftmax(x),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'rmsnorm',
    cases: rowShapes.map((shape) => ({
      name: `rmsnorm [${shape.join(', ')}]`,
      inputs: [{ shape }, { shape: [shape[shape.length - 1]] }],
      run: ([x, w]: Tensor[]) => rmsnorm(x, w, 1e-5),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'layernorm',
    cases: rowShapes.map((shape) => ({
      name: `layernorm [${shape.join(', ')}]`,
      inputs: [{ shape }, { shape: [shape[shape.length - 1]] }, { shape: [shape[shape.length - 1]] }],
      run: ([x, w, b]: Tensor[]) => layernorm(x, w, b, 1e-5),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'rope',
    cases: [
      { shape: [1, 1, 1, 2], offset: 0, theta: 10_000 },
      { shape: [2, 7, 3, 8], offset: 0, theta: 10_000 },
      { shape: [1, 1, 6, 48], offset: 255, theta: 10_000 },
      { shape: [1, 65, 4, 16], offset: 5, theta: 500_000 },
      { shape: [2, 3, 2, 64], offset: 1000, theta: 10_000 },
    ].map(({ shape, offset, theta }) => ({
      name: `rope [${shape.join(', ')}] offset ${offset} theta ${theta}`,
      inputs: [{ shape }],
      run: ([x]: Tensor[]) => rope(x, { offset, theta }),
      tol: { atol: 2e-4, rtol: 1e-4 },
      fused: true,
    })),
  },
  {
    op: 'attention',
    cases: attentionCases.map(({ b, t, s, h, hkv, hd, causal = true, label }) => ({
      name: `attention ${label}: q [${b}, ${t}, ${h}, ${hd}], kv [${b}, ${s}, ${hkv}, ${hd}]`,
      inputs: [{ shape: [b, t, h, hd] }, { shape: [b, s, hkv, hd] }, { shape: [b, s, hkv, hd] }],
      run: ([q, k, v]: Tensor[]) => attention(q, k, v, { causal }),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'swiglu',
    cases: [[1], [257], [3, 768], [2, 5, 65]].map((shape) => ({
      name: `swiglu [${shape.join(', ')}]`,
      inputs: [{ shape, dist: { kind: 'normal', scale: 3 } as const }, { shape }],
      run: ([g, u]: Tensor[]) => swiglu(g, u),
      tol: { atol: 1e-5, rtol: 1e-4 },
      fused: true,
    })),
  },
  {
    op: 'adamw',
    cases: [[1], [257], [128, 512]].map((shape) => ({
      name: `adamw [${shape.join(', ')}] (param, m and v after one step, concatenated)`,
      inputs: [{ shape }, { shape }, { shape }, { shape, dist: { kind: 'positive' } as const }],
      run: ([p, g, m, v]: Tensor[]) => {
        const [p1, m1, v1] = [clone(p), clone(m), clone(v)];
        adamw(p1, g, m1, v1, {
          lr: 0.01,
          beta1: 0.9,
          beta2: 0.99,
          eps: 1e-8,
          weightDecay: 0.1,
          c1: 0.19,
          c2: 0.0199,
        });
        const out = concat([p1, m1, v1], 0);
        for (const t of [p1, m1, v1]) t.dispose();
        return out;
      },
      tol: ELEMENTWISE,
      fused: true,
    })),
  },
  {
    op: 'rmsnormGrad',
    cases: rowShapes.map((shape) => ({
      name: `rmsnormGrad [${shape.join(', ')}]`,
      inputs: [{ shape }, { shape: [shape[shape.length - 1]] }, { shape }],
      run: ([x, w, g]: Tensor[]) => rmsnormGrad(x, w, g, 1e-5),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'layernormGrad',
    cases: rowShapes.map((shape) => ({
      name: `layernormGrad [${shape.join(', ')}]`,
      inputs: [{ shape }, { shape: [shape[shape.length - 1]] }, { shape }],
      run: ([x, w, g]: Tensor[]) => layernormGrad(x, w, g, 1e-5),
      tol: REDUCTION,
      fused: true,
    })),
  },
  {
    op: 'geluGrad',
    cases: [[1], [257], [768, 512]].map((shape) => ({
      name: `geluGrad [${shape.join(', ')}]`,
      inputs: [{ shape, dist: { kind: 'normal', scale: 3 } as const }, { shape }],
      run: ([x, g]: Tensor[]) => geluGrad(x, g),
      tol: { atol: 1e-5, rtol: 1e-4 },
      fused: true,
    })),
  },
  {
    op: 'softmaxCrossEntropy',
    cases: [
      { n: 1, v: 1, ignore: -100 },
      { n: 5, v: 7, ignore: -100 },
      { n: 12, v: 65, ignore: 3 },
      { n: 64, v: 512, ignore: -1 },
      { n: 4, v: 32_000, ignore: -100 },
      { n: 9, v: 5, ignore: -100, outOfRange: true },
    ].map(({ n, v, ignore, outOfRange }) => ({
      name: `softmaxCrossEntropy [${n}, ${v}] ignoring ${ignore}${outOfRange ? ' with out-of-range targets' : ''}`,
      inputs: [
        { shape: [n, v], dist: { kind: 'normal', scale: 3 } as const },
        {
          shape: [n],
          dist: {
            kind: 'ints',
            low: ignore === -1 || outOfRange ? -1 : 0,
            high: outOfRange ? v : v - 1,
          } as const,
        },
      ],
      run: ([logits, targets]: Tensor[]) => softmaxCrossEntropy(logits, targets, ignore),
      tol: REDUCTION,
      fused: true,
    })),
  },
];
