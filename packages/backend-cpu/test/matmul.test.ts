import type { MatmulSpec } from '@loom/tensor';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CpuBackend } from '../src/backend';
import { matmulInto } from '../src/matmul';
import type { CpuPrecision, FloatArray } from '../src/precision';
import { CpuStorage } from '../src/storage';
import { cpuThreadsReady } from '../src/threads/shared-pool';
import { BASELINE_FEATURES } from '../src/wasm/expr';
import { GEMM_WORK_BYTES, gemmConfig } from '../src/wasm/gemm-kernel';
import { buildKernelModule } from '../src/wasm/kernel-module';
import { chunkPlan, planMatmul } from '../src/wasm/matmul-plan';
import { compileKernels, wasmRuntime, wasmUnavailableReason } from '../src/wasm/runtime';
import { type CpuKernelSettings, cpuKernelSettings } from '../src/wasm/settings';
import {
  BYTE_DOT_VARIABLE,
  engineFeatures,
  engineHasSimd,
  RELAXED_SIMD_VARIABLE,
  WIDE_TILES_VARIABLE,
} from '../src/wasm/simd-probe';

type Mode = {
  readonly name: string;
  readonly wasm: boolean;
  readonly threads: number;
  readonly precision: CpuPrecision;
};
const MODES: readonly Mode[] = [
  { name: 'wasm, 1 thread', wasm: true, threads: 1, precision: 'f32' },
  { name: 'wasm, 2 threads', wasm: true, threads: 2, precision: 'f32' },
  { name: 'javascript', wasm: false, threads: 1, precision: 'f32' },
  { name: 'float64', wasm: true, threads: 2, precision: 'f64' },
];

let seed = 12345;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
  return ((seed >>> 8) / 2 ** 24) * 2 - 1;
}

/** Random values; at precision 'f64' with bits below float32's precision too. */
function filled(length: number, precision: CpuPrecision = 'f32'): CpuStorage {
  const s = new CpuStorage('f32', length, true, precision);
  const v = s.f32;
  for (let i = 0; i < length; i++) v[i] = precision === 'f64' ? random() + 2 ** -26 * random() : random();
  return s;
}

function spec(
  m: number,
  n: number,
  k: number,
  options: Partial<Pick<MatmulSpec, 'batch' | 'transA' | 'transB' | 'aBatchStride' | 'bBatchStride'>> = {},
): MatmulSpec {
  return {
    batch: options.batch ?? 1,
    m,
    n,
    k,
    transA: options.transA ?? false,
    transB: options.transB ?? false,
    aBatchStride: options.aBatchStride ?? m * k,
    bBatchStride: options.bBatchStride ?? k * n,
  };
}

/** Float64 reference; also returns sum |a||b| per element, which bounds the rounding error. */
function reference(
  s: MatmulSpec,
  a: FloatArray,
  b: FloatArray,
): { value: Float64Array; magnitude: Float64Array } {
  const value = new Float64Array(s.batch * s.m * s.n);
  const magnitude = new Float64Array(value.length);
  for (let p = 0; p < s.batch; p++) {
    for (let i = 0; i < s.m; i++) {
      for (let j = 0; j < s.n; j++) {
        let sum = 0;
        let mag = 0;
        for (let q = 0; q < s.k; q++) {
          const x = a[p * s.aBatchStride + (s.transA ? q * s.m + i : i * s.k + q)];
          const y = b[p * s.bBatchStride + (s.transB ? j * s.k + q : q * s.n + j)];
          sum += x * y;
          mag += Math.abs(x * y);
        }
        value[(p * s.m + i) * s.n + j] = sum;
        magnitude[(p * s.m + i) * s.n + j] = mag;
      }
    }
  }
  return { value, magnitude };
}

/** The worst error of one product relative to its bound (at most 1 passes). */
function run(
  settings: CpuKernelSettings,
  s: MatmulSpec,
  precision: CpuPrecision = 'f32',
): { out: FloatArray; worst: number } {
  const aLength = (s.batch - 1) * s.aBatchStride + s.m * s.k;
  const bLength = (s.batch - 1) * s.bBatchStride + s.k * s.n;
  const a = filled(aLength, precision);
  const b = filled(bLength, precision);
  const out = filled(s.batch * s.m * s.n, precision);
  matmulInto(settings, s, a, b, out);
  const { value, magnitude } = reference(s, a.f32, b.f32);
  const result = out.f32.slice();
  const unitRoundoff = precision === 'f64' ? 2 ** -53 : 2 ** -24;
  let worst = 0;
  for (let i = 0; i < value.length; i++) {
    // Accumulation error grows at most linearly with k (relative to sum |a b|).
    const tolerance = 2 * (s.k + 1) * unitRoundoff * magnitude[i] + 1e-300;
    worst = Math.max(worst, Math.abs(result[i] - value[i]) / tolerance);
  }
  for (const st of [a, b, out]) st.free();
  return { out: result, worst };
}

/** The packed gemm's blocking on this host: the shapes below cross a block of k and of n. */
const BLOCKS = gemmConfig(engineFeatures());

const SHAPES: readonly [number, number, number][] = [
  [1, 1, 1],
  [1, 7, 3],
  [5, 1, 9],
  [2, 3, 1],
  [3, 5, 7],
  [4, 8, 16],
  [13, 29, 37],
  [67, 130, BLOCKS.kc + 3],
  [9, 2 * BLOCKS.nc + 52, 5],
];

describe.each(MODES)('matmul ($name)', (mode) => {
  const settings = cpuKernelSettings({ wasm: mode.wasm, threads: mode.threads });
  beforeAll(async () => {
    await cpuThreadsReady(settings);
  });

  for (const transA of [false, true]) {
    for (const transB of [false, true]) {
      it(`matches a float64 reference, transA ${transA}, transB ${transB}`, () => {
        for (const [m, n, k] of SHAPES) {
          const { worst } = run(settings, spec(m, n, k, { transA, transB }), mode.precision);
          expect(worst, `${m}x${n}x${k}`).toBeLessThanOrEqual(1);
        }
      });
    }
  }

  it('handles batches, including a broadcast (stride 0) operand', () => {
    for (const [m, n, k] of [
      [1, 40, 24],
      [6, 1, 24],
      [7, 9, 11],
      [64, 64, 32],
    ] as const) {
      for (const transB of [false, true]) {
        const cases = [
          spec(m, n, k, { batch: 5, transB }),
          spec(m, n, k, { batch: 3, transB, aBatchStride: 0 }),
          spec(m, n, k, { batch: 3, transB, bBatchStride: 0, transA: true }),
        ];
        for (const c of cases)
          expect(run(settings, c, mode.precision).worst, JSON.stringify(c)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('computes the decode and training shapes of the target models', () => {
    const shapes = [
      spec(1, 768, 288, { transB: true }),
      spec(1, 2000, 288, { transB: true }),
      spec(1, 768, 288),
      spec(192, 128, 128),
      spec(128, 128, 192, { transA: true }),
      spec(192, 384, 128, { transB: true }),
      spec(12, 64, 32, { batch: 16, transB: true }),
    ];
    for (const s of shapes)
      expect(run(settings, s, mode.precision).worst, JSON.stringify(s)).toBeLessThanOrEqual(1);
  });

  it('computes products of 2 to 16 rows with a transposed B (the batched decode of a server)', () => {
    for (let m = 2; m <= 16; m++) {
      for (const [n, k] of [
        [7, 5],
        [33, 3],
        [130, 290],
        [2003, 288],
      ] as const) {
        const s = spec(m, n, k, { transB: true });
        expect(run(settings, s, mode.precision).worst, `${m}x${n}x${k}`).toBeLessThanOrEqual(1);
      }
    }
    for (const c of [
      spec(5, 41, 37, { batch: 3, transB: true }),
      spec(3, 41, 37, { batch: 4, transB: true, bBatchStride: 0 }),
      spec(9, 22, 13, { batch: 2, transB: true, aBatchStride: 0 }),
    ]) {
      expect(run(settings, c, mode.precision).worst, JSON.stringify(c)).toBeLessThanOrEqual(1);
    }
  });

  it('writes zeros when k is 0', () => {
    const out = filled(12, mode.precision);
    const empty = () => new CpuStorage('f32', 0, true, mode.precision);
    matmulInto(settings, spec(3, 4, 0), empty(), empty(), out);
    expect([...out.f32]).toEqual(new Array(12).fill(0));
  });
});

/**
 * The kernel module of this engine's features with `wideTiles` as given, instantiated in a memory of its own of `pages`
 * pages that holds `values` from address 0.
 */
function kernelsWithTiles(
  wideTiles: boolean,
  pages: number,
  values: Float32Array,
): { exports: WebAssembly.Exports; memory: WebAssembly.Memory } {
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const bytes = buildKernelModule(
    { initialPages: pages, maximumPages: pages, shared: false },
    { ...engineFeatures(), wideTiles },
  );
  const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
  new Float32Array(memory.buffer).set(values);
  return { exports, memory };
}

describe('matmul kernels', () => {
  const oneThread = cpuKernelSettings({ wasm: true, threads: 1 });

  it('builds a valid SIMD module and uses it on this host', () => {
    expect(
      WebAssembly.validate(buildKernelModule({ initialPages: 1, maximumPages: 65536, shared: true })),
    ).toBe(true);
    expect(
      WebAssembly.validate(buildKernelModule({ initialPages: 1, maximumPages: 65536, shared: false })),
    ).toBe(true);
    expect(wasmUnavailableReason()).toBeUndefined();
    expect(wasmRuntime()?.heap.shared).toBe(true);
  });

  it('builds its products with relaxed SIMD multiply-adds (Node 20 after turning its flag on), plain SIMD when turned off', () => {
    const turnedOff = process.env[RELAXED_SIMD_VARIABLE] === '0';
    const major = Number(process.versions.node.split('.')[0]);
    const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
    const forcedTiles = process.env[WIDE_TILES_VARIABLE];
    // Wide tiles from V8 13.6 (Node 24), unless LOOM_WASM_WIDE_TILES says otherwise.
    const wideTiles =
      forcedTiles === '1' || forcedTiles === '0' ? forcedTiles === '1' : v8Major * 10 + v8Minor >= 136;
    // The byte dot product in its i32 form from Node 22 or its i16 one (Node 20's i32 form gives wrong sums), which
    // of the two the machine decides (a probe of the i32 form's results out of range) unless LOOM_WASM_BYTE_DOT does.
    const forcedByteDot = process.env[BYTE_DOT_VARIABLE];
    const { byteDot } = engineFeatures();
    if (turnedOff) expect(byteDot).toBe('none');
    else if (forcedByteDot === 'i32') expect(byteDot).toBe(major >= 22 ? 'i32' : 'none');
    else if (forcedByteDot === 'i16') expect(byteDot).toBe('i16');
    else expect(major >= 22 ? ['i32', 'i16'] : ['i16']).toContain(byteDot);
    expect(engineFeatures()).toEqual({
      relaxedMadd: !turnedOff,
      byteDot,
      wideTiles: !turnedOff && wideTiles,
    });
    expect(wasmRuntime()?.features).toEqual(engineFeatures());
    const relaxed = buildKernelModule(
      { initialPages: 1, maximumPages: 65536, shared: false },
      { relaxedMadd: true, byteDot: 'i32', wideTiles: true },
    );
    // Node 20 validates relaxed SIMD only once engineFeatures has turned on --experimental-wasm-relaxed-simd.
    expect(WebAssembly.validate(relaxed)).toBe(major >= 22 || !turnedOff);
  });

  it("reports a kernel module that fails validation with the validator's message, not as missing SIMD", () => {
    expect(engineHasSimd()).toBe(true);
    const bytes = buildKernelModule({ initialPages: 1, maximumPages: 65536, shared: false });
    // The last byte closes the last function body; without it the module is malformed.
    const broken = bytes.slice(0, bytes.length - 1);
    expect(() => compileKernels(broken)).toThrow(
      /generated WebAssembly kernel module failed validation: WebAssembly\.Module\(\): .+/,
    );
  });

  it('plans products of 2 to 128 rows times a transposed B on the few-row kernel, split along n', () => {
    const operands = { a: 0, b: 0, out: 0 };
    for (const m of [2, 8, 16, 77, 128]) {
      const plan = planMatmul(spec(m, 32000, 288, { transB: true }), operands, BASELINE_FEATURES);
      expect(plan.kernel).toBe('gemm_few_t');
      expect(chunkPlan(plan, 2).length).toBeGreaterThan(1);
    }
    expect(planMatmul(spec(129, 32000, 288, { transB: true }), operands, BASELINE_FEATURES).kernel).toBe(
      'gemm',
    );
    expect(planMatmul(spec(8, 768, 288), operands, BASELINE_FEATURES).kernel).toBe('gemm');
    expect(
      planMatmul(spec(8, 768, 288, { transA: true, transB: true }), operands, BASELINE_FEATURES).kernel,
    ).toBe('gemm');
  });

  it("splits the packed gemm along whole register tiles of the engine's configuration", () => {
    const operands = { a: 0, b: 0, out: 0 };
    // 4 x 8 tiles with separate multiplies and adds or where wide tiles would spill, 6 x 8 with fused multiply-adds.
    for (const [features, rows] of [
      [BASELINE_FEATURES, 4],
      [{ ...BASELINE_FEATURES, relaxedMadd: true }, 4],
      [{ ...BASELINE_FEATURES, relaxedMadd: true, wideTiles: true }, 6],
    ] as const) {
      const byRows = planMatmul(spec(768, 128, 512), operands, features);
      expect([byRows.kernel, byRows.align]).toEqual(['gemm', rows]);
      expect(planMatmul(spec(128, 768, 512), operands, features).align).toBe(8);
    }
  });

  it('sums every output of the few-row kernel with the same bits in blocks of 4 and of 6 rows of W', () => {
    // m odd (a 1-row tile), n = 61 (rows left after the blocks either way), k = 290 (a k mod 4 tail).
    const [m, n, k] = [13, 61, 290];
    const [a, w, out] = [0, 4 * m * k, 4 * (m + n) * k];
    seed = 7;
    const values = Float32Array.from({ length: (m + n) * k }, random);
    const outputs = [false, true].map((wideTiles) => {
      const { exports, memory } = kernelsWithTiles(wideTiles, 2, values);
      const gemmFew = exports.gemm_few_t as (...args: number[]) => void;
      gemmFew(1, 0, 0, 0, m, n, k, n, a, w, out, 4 * (m + n) * k + 4 * m * n);
      return new Float32Array(memory.buffer, out, m * n).slice();
    });
    expect(outputs[1]).toEqual(outputs[0]);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let q = 0; q < k; q++) sum += values[i * k + q] * values[(m + j) * k + q];
        expect(outputs[0][i * n + j]).toBeCloseTo(sum, 3);
      }
    }
  });

  it('sums every output of the packed gemm with the same bits whether the wide tile loads A as vectors or integers, A transposed or not', () => {
    // 6 x 8 tiles with fused multiply-adds (the engine's 4 x 8 tile without them): m = 13 and n = 37 leave edge tiles,
    // k = 290 a tail of steps; A row-major packs its 6-row panels by 4 x 4 transposes and a last pair of rows, A
    // transposed by copies of 4 values and a pair.
    const [m, n, k] = [13, 37, 290];
    const [a, b, c, work] = [0, 4 * m * k, 4 * (m + n) * k, 4 * ((m + n) * k + m * n)];
    const pages = Math.ceil((work + GEMM_WORK_BYTES) / 65536);
    seed = 11;
    const values = Float32Array.from({ length: (m + n) * k }, random);
    for (const transA of [false, true]) {
      const [rsA, csA] = transA ? [1, m] : [k, 1];
      const outputs = [false, true].map((wideTiles) => {
        const { exports, memory } = kernelsWithTiles(wideTiles, pages, values);
        const gemm = exports.gemm as (...args: number[]) => void;
        gemm(1, 0, 0, 0, m, n, k, a, rsA, csA, b, n, 1, c, n, 0, work);
        return new Float32Array(memory.buffer, c, m * n).slice();
      });
      expect(outputs[1]).toEqual(outputs[0]);
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let q = 0; q < k; q++) sum += values[i * rsA + q * csA] * values[m * k + q * n + j];
          expect(outputs[0][i * n + j]).toBeCloseTo(sum, 3);
        }
      }
    }
  });

  it('gives bit-identical results on 1 and 2 threads and in large products', async () => {
    const shapes = [
      spec(300, 260, BLOCKS.kc + 12),
      spec(8, 3000, 96, { transB: true }),
      spec(13, 4001, 290, { transB: true }),
      spec(1, 4000, 300, { transB: true }),
    ];
    for (const s of shapes) {
      const results = [];
      for (const threads of [1, 2]) {
        const settings = cpuKernelSettings({ wasm: true, threads });
        expect(await cpuThreadsReady(settings)).toBe(threads);
        seed = 99;
        const { out, worst } = run(settings, s);
        expect(worst).toBeLessThanOrEqual(1);
        results.push(out);
      }
      expect(results[1]).toEqual(results[0]);
    }
  });

  it('sums each row of a matrix-vector product in the same order however many rows it reads at once', () => {
    // gemv_t reads several parts of W at once and the rows left over one at a time: every row must come out with
    // the bits it has alone. k = 45: four-vector blocks, a single vector, then a scalar tail.
    const k = 45;
    const x = filled(2 * k);
    for (const n of [1, 5, 6, 7, 12, 13, 19, 40]) {
      const w = filled(2 * n * k);
      const out = new CpuStorage('f32', 2 * n, true);
      matmulInto(
        oneThread,
        spec(1, n, k, { batch: 2, transB: true, aBatchStride: k, bBatchStride: n * k }),
        x,
        w,
        out,
      );
      const row = new CpuStorage('f32', k, true);
      const alone = new CpuStorage('f32', 1, true);
      for (let p = 0; p < 2; p++) {
        for (let j = 0; j < n; j++) {
          row.f32.set(w.f32.subarray((p * n + j) * k, (p * n + j + 1) * k));
          const xp = new CpuStorage('f32', k, true);
          xp.f32.set(x.f32.subarray(p * k, (p + 1) * k));
          matmulInto(oneThread, spec(1, 1, k, { transB: true }), xp, row, alone);
          xp.free();
          expect(out.f32[p * n + j], `n ${n}, entry ${p}, row ${j}`).toBe(alone.f32[0]);
        }
      }
      for (const s of [w, out, row, alone]) s.free();
    }
    x.free();
  });

  it('adds a bias to every row exactly as the product and then an add, on each kernel and each split', async () => {
    const shapes = [
      spec(1, 300, 64, { transB: true }), // matrix-vector
      spec(5, 70, 33, { transB: true }), // few rows
      spec(300, 260, 80), // packed, split by rows
      spec(140, 3000, 96, { transB: true }), // packed, split by columns
      spec(30, 21, 9, { batch: 2 }), // packed, two entries
    ];
    const modes = [
      { wasm: true, threads: 1 },
      { wasm: true, threads: 2 },
      { wasm: false, threads: 1 },
    ];
    for (const mode of modes) {
      const settings = cpuKernelSettings(mode);
      expect(await cpuThreadsReady(settings)).toBe(mode.threads);
      for (const s of shapes) {
        const a = filled((s.batch - 1) * s.aBatchStride + s.m * s.k);
        const b = filled((s.batch - 1) * s.bBatchStride + s.k * s.n);
        const bias = filled(s.n);
        const [plain, biased] = [filled(s.batch * s.m * s.n), filled(s.batch * s.m * s.n)];
        matmulInto(settings, s, a, b, plain);
        matmulInto(settings, s, a, b, biased, bias);
        const want = plain.f32.map((v, i) => Math.fround(v + bias.f32[i % s.n]));
        // The first differing element, if any (a diff of 120 000 values would take minutes to print).
        const bad = want.findIndex((w, i) => !Object.is(w, biased.f32[i]));
        const where = bad < 0 ? '' : ` at ${bad}: ${biased.f32[bad]} instead of ${want[bad]}`;
        expect(bad, `${JSON.stringify(mode)} ${s.m}x${s.n}x${s.k}${where}`).toBe(-1);
        for (const st of [a, b, bias, plain, biased]) st.free();
      }
    }
    expect(() => matmulInto(oneThread, spec(2, 3, 4), filled(8), filled(12), filled(6), filled(2))).toThrow(
      /the bias holds 2 values, the product has 3 columns/,
    );
  });

  it('reaches memory that grew after the workers started', async () => {
    const settings = cpuKernelSettings({ wasm: true, threads: 2 });
    expect(await cpuThreadsReady(settings)).toBe(2);
    const heap = wasmRuntime()?.heap;
    const before = heap?.byteLength ?? 0;
    const filler = new CpuStorage('f32', 30_000_000);
    expect(heap?.byteLength).toBeGreaterThan(before);
    const { worst } = run(settings, spec(400, 300, 256));
    expect(worst).toBeLessThanOrEqual(1);
    filler.free();
  });

  it('rejects storages smaller than the spec needs', () => {
    const a = new CpuStorage('f32', 6);
    const b = new CpuStorage('f32', 6);
    const out = new CpuStorage('f32', 3);
    expect(() => matmulInto(oneThread, spec(2, 2, 3), a, b, out)).toThrow(/out holds 3 values, .* needs 4/);
    expect(() =>
      matmulInto(oneThread, spec(2, 2, 3, { batch: 2, aBatchStride: 6 }), a, b, new CpuStorage('f32', 8)),
    ).toThrow(/A holds 6 values/);
  });

  it('rejects a thread count that is not a positive integer', () => {
    expect(() => cpuKernelSettings({ threads: 0 })).toThrow(/threads must be a positive integer, got 0/);
    expect(() => new CpuBackend({ threads: 1.5 })).toThrow(/threads must be a positive integer, got 1.5/);
    expect(cpuKernelSettings().threads).toBeGreaterThanOrEqual(1);
  });
});

describe('matmul on hosts without SharedArrayBuffer or WebAssembly SIMD', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    vi.resetModules();
  });

  async function productOnFreshModules(): Promise<{
    out: number[];
    address: number | undefined;
    shared: boolean | undefined;
  }> {
    const { CpuStorage: Storage } = await import('../src/storage');
    const { matmulInto: product } = await import('../src/matmul');
    const { cpuKernelSettings: settingsOf } = await import('../src/wasm/settings');
    const { wasmRuntime: runtime } = await import('../src/wasm/runtime');
    const [m, n, k] = [40, 300, 200];
    const a = new Storage('f32', m * k);
    const b = new Storage('f32', k * n);
    const out = new Storage('f32', m * n);
    a.f32.fill(0.5);
    b.f32.fill(0.25);
    product(settingsOf({ threads: 2 }), spec(m, n, k), a, b, out);
    return { out: [out.f32[0], out.f32[m * n - 1]], address: out.address, shared: runtime()?.heap.shared };
  }

  it('runs the SIMD kernels on one thread over an unshared memory', async () => {
    vi.resetModules();
    vi.stubGlobal('SharedArrayBuffer', undefined);
    const { out, address, shared } = await productOnFreshModules();
    expect(shared).toBe(false);
    expect(address).toBeDefined();
    expect(out).toEqual([25, 25]);
  });

  it('falls back to the JavaScript kernels without SIMD', async () => {
    vi.resetModules();
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const { out, address, shared } = await productOnFreshModules();
    expect(shared).toBeUndefined();
    expect(address).toBeUndefined();
    expect(out).toEqual([25, 25]);
  });
});
