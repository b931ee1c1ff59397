import type { MatmulSpec } from '@loom/tensor';
import { binaryKernel } from './binary';
import type { FloatArray } from './precision';
import type { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import { chunkPlan, planMatmul } from './wasm/matmul-plan';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/**
 * out [batch, m, n] = A x B as described by `spec` (see MatmulSpec), accumulating in f32 (in
 * f64 at precision 'f64'), plus `bias` [n] on every row when given. Runs the WebAssembly SIMD
 * kernels (on worker threads too, for large products) when the operands live in the WebAssembly
 * heap, else the JavaScript kernels. The packed gemm adds the bias in its own pass over the block it
 * wrote; after the other kernels (few rows, hot in the caches) it is added here.
 */
export function matmulInto(
  settings: CpuKernelSettings,
  spec: MatmulSpec,
  a: CpuStorage,
  b: CpuStorage,
  out: CpuStorage,
  bias?: CpuStorage,
): void {
  checkSizes(spec, a, b, out);
  const { batch, m, n, k } = spec;
  if (bias !== undefined && bias.length !== n) {
    throw new Error(`matmul: the bias holds ${bias.length} values, the product has ${n} columns`);
  }
  if (k === 0 || batch * m * n === 0) {
    out.f32.fill(0, 0, batch * m * n);
    if (bias) addBiasRows(settings, out, bias, batch * m);
    return;
  }
  const runtime = kernelRuntime(settings);
  const [addressA, addressB, addressOut] = [a.address, b.address, out.address];
  if (!runtime || addressA === undefined || addressB === undefined || addressOut === undefined) {
    matmulJs(spec, a.f32, b.f32, out.f32);
    if (bias) addBiasRows(settings, out, bias, batch * m);
    return;
  }
  if (settings.threads === 1 && batch === 1 && m === 1 && spec.transB) {
    // The decode step's product with a weight stored [out, in], on this thread: no plan to build.
    runtime.kernels.gemv_t(1, 0, 0, 0, n, k, addressA, addressB, addressOut, runtime.work.offset);
    if (bias) addBiasRows(settings, out, bias, 1);
    return;
  }
  const plan = planMatmul(
    spec,
    { a: addressA, b: addressB, out: addressOut, bias: bias?.address },
    runtime.features,
  );
  forkJoin(runtime, settings.threads, plan.kernel, plan.micros, (threads) => chunkPlan(plan, threads));
  if (bias && !plan.addsBias) addBiasRows(settings, out, bias, batch * m);
}

/** out [rows, n] += bias [n] on every row, in place, by the element-wise add. */
function addBiasRows(settings: CpuKernelSettings, out: CpuStorage, bias: CpuStorage, rows: number): void {
  const shape = [rows, bias.length];
  binaryKernel(settings, 'add', 'f32', out, shape, bias, [bias.length], out, shape);
}

/** A product of `rows` rows times a weight stored [n, k] (transposed), as matmulInto takes it. */
export function weightProduct(rows: number, n: number, k: number): MatmulSpec {
  return { batch: 1, m: rows, n, k, transA: false, transB: true, aBatchStride: 0, bBatchStride: 0 };
}

/** Throws unless the storages hold the matrices `spec` describes (kernels trust these sizes). */
function checkSizes(spec: MatmulSpec, a: CpuStorage, b: CpuStorage, out: CpuStorage): void {
  const { batch, m, n, k, aBatchStride, bBatchStride } = spec;
  const dims = [batch, m, n, k, aBatchStride, bBatchStride];
  if (!dims.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new Error(`matmul: expected non-negative integer sizes and strides, got ${JSON.stringify(spec)}`);
  }
  if (batch === 0) return;
  const need = [
    ['A', a, (batch - 1) * aBatchStride + m * k],
    ['B', b, (batch - 1) * bBatchStride + k * n],
    ['out', out, batch * m * n],
  ] as const;
  for (const [name, storage, elements] of need) {
    if (storage.length < elements) {
      throw new Error(
        `matmul: ${name} holds ${storage.length} values, but batch ${batch} x [${m}, ${k}] x [${k}, ${n}] ` +
          `(transA ${spec.transA}, transB ${spec.transB}, batch strides ${aBatchStride}, ${bBatchStride}) needs ${elements}`,
      );
    }
  }
}

/** Register tile (rows x columns) and cache blocking of the JavaScript kernel. */
const JS_TILE = 4;
const JS_KC = 256;
const JS_MC = 64;
const JS_NC = 1024;

/** Packed panels of A and B, grown on demand: float32 for float32 outputs, float64 at precision 'f64' so nothing rounds. */
const panels = {
  f32: { a: new Float32Array(0), b: new Float32Array(0) },
  f64: { a: new Float64Array(0), b: new Float64Array(0) },
};

/** The packed panels for an output array, at least big enough for one block. */
function panelsFor(out: FloatArray): { a: FloatArray; b: FloatArray } {
  if (out instanceof Float32Array) {
    const p = panels.f32;
    if (p.a.length < JS_MC * JS_KC) p.a = new Float32Array(JS_MC * JS_KC);
    if (p.b.length < JS_KC * JS_NC) p.b = new Float32Array(JS_KC * JS_NC);
    return p;
  }
  const p = panels.f64;
  if (p.a.length < JS_MC * JS_KC) p.a = new Float64Array(JS_MC * JS_KC);
  if (p.b.length < JS_KC * JS_NC) p.b = new Float64Array(JS_KC * JS_NC);
  return p;
}

/**
 * The portable kernels: m = 1 and n = 1 as matrix-vector products, else packed panels (of the
 * output's precision) and a 4 x 4 register tile.
 */
export function matmulJs(spec: MatmulSpec, av: FloatArray, bv: FloatArray, ov: FloatArray): void {
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = spec;
  const [rsA, csA] = transA ? [1, m] : [k, 1];
  const [rsB, csB] = transB ? [1, k] : [n, 1];
  for (let p = 0; p < batch; p++) {
    const ao = p * aBatchStride;
    const bo = p * bBatchStride;
    const oo = p * m * n;
    if (m === 1) gemvJs(av, ao, bv, bo, rsB, csB, n, k, ov, oo);
    else if (n === 1) gemvJs(bv, bo, av, ao, csA, rsA, m, k, ov, oo);
    else gemmJs(m, n, k, av, ao, rsA, csA, bv, bo, rsB, csB, ov, oo);
  }
}

/** out[j] = sum_q x[q] W[q * rs + j * cs] for j < n: dot products when W's rows are contiguous, else axpy. */
function gemvJs(
  x: FloatArray,
  xo: number,
  w: FloatArray,
  wo: number,
  rs: number,
  cs: number,
  n: number,
  k: number,
  out: FloatArray,
  oo: number,
): void {
  if (rs === 1) {
    for (let j = 0; j < n; j++) {
      const row = wo + j * cs;
      let s0 = 0;
      let s1 = 0;
      let q = 0;
      for (; q + 1 < k; q += 2) {
        s0 += x[xo + q] * w[row + q];
        s1 += x[xo + q + 1] * w[row + q + 1];
      }
      if (q < k) s0 += x[xo + q] * w[row + q];
      out[oo + j] = s0 + s1;
    }
    return;
  }
  out.fill(0, oo, oo + n);
  for (let q = 0; q < k; q++) {
    const s = x[xo + q];
    const row = wo + q * rs;
    for (let j = 0; j < n; j++) out[oo + j] += s * w[row + j * cs];
  }
}

function gemmJs(
  m: number,
  n: number,
  k: number,
  av: FloatArray,
  ao: number,
  rsA: number,
  csA: number,
  bv: FloatArray,
  bo: number,
  rsB: number,
  csB: number,
  ov: FloatArray,
  oo: number,
): void {
  const T = JS_TILE;
  const { a: pa, b: pb } = panelsFor(ov);
  for (let jc = 0; jc < n; jc += JS_NC) {
    const nc = Math.min(JS_NC, n - jc);
    for (let pc = 0; pc < k; pc += JS_KC) {
      const kc = Math.min(JS_KC, k - pc);
      // B block as k-major panels of T columns, zero-padded.
      for (let jp = 0; jp < nc; jp += T) {
        const base = jp * kc;
        for (let c = 0; c < T; c++) {
          const j = jc + jp + c;
          const src = bo + pc * rsB + j * csB;
          for (let p = 0; p < kc; p++) pb[base + p * T + c] = jp + c < nc ? bv[src + p * rsB] : 0;
        }
      }
      for (let ic = 0; ic < m; ic += JS_MC) {
        const mc = Math.min(JS_MC, m - ic);
        for (let ip = 0; ip < mc; ip += T) {
          const base = ip * kc;
          for (let r = 0; r < T; r++) {
            const src = ao + (ic + ip + r) * rsA + pc * csA;
            for (let p = 0; p < kc; p++) pa[base + p * T + r] = ip + r < mc ? av[src + p * csA] : 0;
          }
        }
        for (let jr = 0; jr < nc; jr += T) {
          for (let ir = 0; ir < mc; ir += T) {
            let c00 = 0,
              c01 = 0,
              c02 = 0,
              c03 = 0,
              c10 = 0,
              c11 = 0,
              c12 = 0,
              c13 = 0;
            let c20 = 0,
              c21 = 0,
              c22 = 0,
              c23 = 0,
              c30 = 0,
              c31 = 0,
              c32 = 0,
              c33 = 0;
            let ia = ir * kc;
            let ib = jr * kc;
            for (let p = 0; p < kc; p++, ia += T, ib += T) {
              const a0 = pa[ia],
                a1 = pa[ia + 1],
                a2 = pa[ia + 2],
                a3 = pa[ia + 3];
              const b0 = pb[ib],
                b1 = pb[ib + 1],
                b2 = pb[ib + 2],
                b3 = pb[ib + 3];
              c00 += a0 * b0;
              c01 += a0 * b1;
              c02 += a0 * b2;
              c03 += a0 * b3;
              c10 += a1 * b0;
              c11 += a1 * b1;
              c12 += a1 * b2;
              c13 += a1 * b3;
              c20 += a2 * b0;
              c21 += a2 * b1;
              c22 += a2 * b2;
              c23 += a2 * b3;
              c30 += a3 * b0;
              c31 += a3 * b1;
              c32 += a3 * b2;
              c33 += a3 * b3;
            }
            const tile = [c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33];
            const rows = Math.min(T, mc - ir);
            const cols = Math.min(T, nc - jr);
            for (let r = 0; r < rows; r++) {
              const o = oo + (ic + ir + r) * n + jc + jr;
              for (let c = 0; c < cols; c++)
                ov[o + c] = pc === 0 ? tile[r * T + c] : ov[o + c] + tile[r * T + c];
            }
          }
        }
      }
    }
  }
}
