import type { BinaryOp, CompareOp, DType, HostArray, Shape } from '@loom/tensor';
import { forEachRow, forEachRowBlock } from './broadcast-rows';
import {
  ELEMENTWISE_OPS,
  type ElementwiseKernelName,
  type ElementwiseOp,
  elementwiseKernel,
} from './wasm/elementwise-kernel';
import type { KernelFunctions } from './wasm/kernels';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/** A WebAssembly elementwise kernel. */
type ElementwiseKernel = KernelFunctions[ElementwiseKernelName];

/** An operand of `binaryKernel`: its values, and their byte address when they live in the WebAssembly heap. */
export interface BinaryOperand {
  readonly values: HostArray;
  readonly address: number | undefined;
}

/** Blocks smaller than this stay in JavaScript: the call into WebAssembly costs more than it saves. */
const MIN_WASM_RUN = 16;

/** out[o + i] = a[ao + i·as] ⊕ b[bo + i·bs] for i < n. One function per op keeps each loop monomorphic. */
type RowKernel = (
  a: HostArray,
  ao: number,
  as: number,
  b: HostArray,
  bo: number,
  bs: number,
  out: HostArray,
  o: number,
  n: number,
) => void;

const f32Kernels: Readonly<Record<BinaryOp, RowKernel>> = {
  add: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] + b[bo + i * bs];
  },
  sub: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] - b[bo + i * bs];
  },
  mul: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] * b[bo + i * bs];
  },
  div: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] / b[bo + i * bs];
  },
  pow: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] ** b[bo + i * bs];
  },
  max: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) {
      const x = a[ao + i * as];
      const y = b[bo + i * bs];
      out[o + i] = x > y || Number.isNaN(x) ? x : y;
    }
  },
  min: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) {
      const x = a[ao + i * as];
      const y = b[bo + i * bs];
      out[o + i] = x < y || Number.isNaN(x) ? x : y;
    }
  },
};

/** i32 differs where integer arithmetic does: products wrap, division truncates (by 0 gives the dividend). */
const i32Kernels: Readonly<Record<BinaryOp, RowKernel>> = {
  ...f32Kernels,
  mul: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = Math.imul(a[ao + i * as], b[bo + i * bs]);
  },
  div: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) {
      const x = a[ao + i * as];
      const y = b[bo + i * bs];
      out[o + i] = y === 0 ? x : Math.trunc(x / y);
    }
  },
};

const compareKernels: Readonly<Record<CompareOp, RowKernel>> = {
  eq: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] === b[bo + i * bs] ? 1 : 0;
  },
  ne: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] !== b[bo + i * bs] ? 1 : 0;
  },
  lt: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] < b[bo + i * bs] ? 1 : 0;
  },
  le: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] <= b[bo + i * bs] ? 1 : 0;
  },
  gt: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] > b[bo + i * bs] ? 1 : 0;
  },
  ge: (a, ao, as, b, bo, bs, out, o, n) => {
    for (let i = 0; i < n; i++) out[o + i] = a[ao + i * as] >= b[bo + i * bs] ? 1 : 0;
  },
};

function runRows(
  kernel: RowKernel,
  a: HostArray,
  aShape: Shape,
  b: HostArray,
  bShape: Shape,
  out: HostArray,
  outShape: Shape,
): void {
  forEachRow(outShape, [aShape, bShape], (o, offsets, n, steps) =>
    kernel(a, offsets[0], steps[0], b, offsets[1], steps[1], out, o, n),
  );
}

/**
 * out = a ⊕ b with broadcasting, for a dtype's arithmetic. f32 add, sub, mul and div run each
 * long contiguous run in a WebAssembly SIMD kernel when all three operands live in the heap
 * (bit-identical: one IEEE f32 operation either way); everything else runs in JavaScript.
 */
export function binaryKernel(
  settings: CpuKernelSettings,
  op: BinaryOp,
  dtype: DType,
  a: BinaryOperand,
  aShape: Shape,
  b: BinaryOperand,
  bShape: Shape,
  out: BinaryOperand,
  outShape: Shape,
): void {
  const kernel = (dtype === 'i32' ? i32Kernels : f32Kernels)[op];
  const av = a.values;
  const bv = b.values;
  const ov = out.values;
  const runtime = dtype === 'f32' ? kernelRuntime(settings) : undefined;
  const ap = a.address;
  const bp = b.address;
  const outp = out.address;
  if (!runtime || !isElementwiseOp(op) || ap === undefined || bp === undefined || outp === undefined) {
    runRows(kernel, av, aShape, bv, bShape, ov, outShape);
    return;
  }
  const wasm = runtime.kernels[elementwiseKernel(op)];
  runHeapRows(wasm, runtime.work.offset, kernel, av, ap, aShape, bv, bp, bShape, ov, outp, outShape);
}

function isElementwiseOp(op: BinaryOp): op is ElementwiseOp {
  return ELEMENTWISE_OPS.some((e) => e === op);
}

/** Like `runRows`, but blocks of rows of MIN_WASM_RUN or more elements go to `wasm` in one call, with byte addresses. */
function runHeapRows(
  wasm: ElementwiseKernel,
  work: number,
  kernel: RowKernel,
  a: HostArray,
  aAddress: number,
  aShape: Shape,
  b: HostArray,
  bAddress: number,
  bShape: Shape,
  out: HostArray,
  outAddress: number,
  outShape: Shape,
): void {
  forEachRowBlock(outShape, [aShape, bShape], (o, offsets, n, steps, rows, rowSteps) => {
    if (n * rows < MIN_WASM_RUN) {
      for (let r = 0; r < rows; r++) {
        const [ao, bo] = [offsets[0] + r * rowSteps[0], offsets[1] + r * rowSteps[1]];
        kernel(a, ao, steps[0], b, bo, steps[1], out, o + r * n, n);
      }
    } else {
      wasm(
        aAddress + 4 * offsets[0],
        steps[0],
        rowSteps[0],
        bAddress + 4 * offsets[1],
        steps[1],
        rowSteps[1],
        outAddress + 4 * o,
        n,
        rows,
        work,
      );
    }
  });
}

/** out = (a ⋈ b) ? 1 : 0 with broadcasting. */
export function compareKernel(
  op: CompareOp,
  a: HostArray,
  aShape: Shape,
  b: HostArray,
  bShape: Shape,
  out: HostArray,
  outShape: Shape,
): void {
  runRows(compareKernels[op], a, aShape, b, bShape, out, outShape);
}

/** out = cond ≠ 0 ? a : b with broadcasting. */
export function whereKernel(
  cond: HostArray,
  cShape: Shape,
  a: HostArray,
  aShape: Shape,
  b: HostArray,
  bShape: Shape,
  out: HostArray,
  outShape: Shape,
): void {
  forEachRow(outShape, [cShape, aShape, bShape], (o, off, n, s) => {
    const [co, ao, bo] = off;
    const [cs, as, bs] = s;
    for (let i = 0; i < n; i++) out[o + i] = cond[co + i * cs] !== 0 ? a[ao + i * as] : b[bo + i * bs];
  });
}
