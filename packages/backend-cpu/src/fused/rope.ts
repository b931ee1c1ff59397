import { type FusedKernels, type Shape, sizeOf } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import type { KernelArgs } from '../wasm/kernels';
import { ROPE_KERNEL } from '../wasm/rope-kernel';
import type { WasmRuntime } from '../wasm/runtime';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import type { CpuKernelContext } from './kernel-context';

/** Estimated cost of one rotated element of the WebAssembly kernel, in microseconds. */
const MICROS_PER_ELEMENT = 0.0005;

/**
 * scale times the cos and sin of the angle (offset + p) * freqs[i] of each position p < t and pair
 * i < freqs.length, as [t, freqs.length]; float32 (frequencies and angles too, like llama2.c) when
 * `single`, else float64.
 */
function ropeTables(
  t: number,
  freqs: readonly number[],
  offset: number,
  scale: number,
  single: boolean,
): { cos: FloatArray; sin: FloatArray } {
  const half = freqs.length;
  const round = single ? Math.fround : (v: number) => v;
  const cos = single ? new Float32Array(t * half) : new Float64Array(t * half);
  const sin = single ? new Float32Array(t * half) : new Float64Array(t * half);
  for (let p = 0; p < t; p++) {
    for (let i = 0; i < half; i++) {
      const angle = round((offset + p) * round(freqs[i]));
      cos[p * half + i] = scale * Math.cos(angle);
      sin[p * half + i] = scale * Math.sin(angle);
    }
  }
  return { cos, sin };
}

/** Tables kept at once (distinct frequency tables and scales, least recently used dropped first). */
const MAX_TABLES = 4;
/** Positions a table holds at least, so a decode stream grows it rarely. */
const MIN_TABLE_POSITIONS = 64;

/**
 * The kernel's expanded tables [positions, hd] for one frequency table and scale, positions
 * 0..filled-1 computed: row p holds each pair's scale·cos twice, then -scale·sin, +scale·sin.
 * Rows are computed once, as a decode stream first reaches them, instead of at every call.
 */
interface RopeTable {
  /** The frequencies it was computed from (a copy) and the array last seen with them. */
  readonly freqs: Float64Array;
  source: readonly number[];
  readonly scale: number;
  cos: CpuStorage;
  sin: CpuStorage;
  /** Rows computed. */
  filled: number;
}

/** Cached tables, most recently used last. */
const tables: RopeTable[] = [];

/**
 * Whether `freqs` holds the values of `table.freqs`; the array last seen with them is taken to still hold
 * them (a frequency table is read-only), so a model's fixed table is recognised without comparing values.
 */
function sameFrequencies(table: RopeTable, freqs: readonly number[], scale: number): boolean {
  if (table.scale !== scale || table.freqs.length !== freqs.length) return false;
  if (table.source === freqs) return true;
  for (let i = 0; i < freqs.length; i++) if (table.freqs[i] !== freqs[i]) return false;
  table.source = freqs;
  return true;
}

/** Writes the expanded rows of positions [from, to) into `table` (see RopeTable) from its row `row` on, with ropeTables' values. */
function fillRows(table: RopeTable, freqs: readonly number[], from: number, to: number, row: number): void {
  const { cos, sin } = ropeTables(to - from, freqs, from, table.scale, true);
  const [cv, sv] = [table.cos.f32, table.sin.f32];
  const base = row * freqs.length;
  for (let k = 0; k < cos.length; k++) {
    const at = 2 * (base + k);
    cv[at] = cos[k];
    cv[at + 1] = cos[k];
    sv[at] = -sin[k];
    sv[at + 1] = sin[k];
  }
}

/**
 * A table of `freqs` and `scale` that holds positions [offset, offset + t), from the cache
 * (grown when a call starts at or before its last row), else a new one covering [0, offset + t)
 * when offset is 0; undefined otherwise (a table that changes at every call, as dynamic NTK
 * scaling's does) or when the heap is full.
 */
function cachedTable(
  freqs: readonly number[],
  scale: number,
  offset: number,
  t: number,
): RopeTable | undefined {
  const end = offset + t;
  const hd = 2 * freqs.length;
  const at = tables.findIndex((table) => sameFrequencies(table, freqs, scale));
  let table = at >= 0 ? tables.splice(at, 1)[0] : undefined;
  if (!table && offset === 0) {
    const positions = Math.max(MIN_TABLE_POSITIONS, end);
    table = {
      freqs: Float64Array.from(freqs),
      source: freqs,
      scale,
      cos: new CpuStorage('f32', positions * hd, false),
      sin: new CpuStorage('f32', positions * hd, false),
      filled: 0,
    };
    if (tables.length >= MAX_TABLES) freeTable(tables.shift());
  }
  if (!table) return undefined;
  tables.push(table);
  if (end <= table.filled) return table;
  if (offset > table.filled) return undefined;
  const capacity = table.cos.length / hd;
  if (end > capacity) {
    const positions = Math.max(2 * capacity, end);
    const [cos, sin] = [
      new CpuStorage('f32', positions * hd, false),
      new CpuStorage('f32', positions * hd, false),
    ];
    cos.f32.set(table.cos.f32.subarray(0, table.filled * hd));
    sin.f32.set(table.sin.f32.subarray(0, table.filled * hd));
    table.cos.free();
    table.sin.free();
    [table.cos, table.sin] = [cos, sin];
  }
  fillRows(table, freqs, table.filled, end, table.filled);
  table.filled = end;
  return table;
}

function freeTable(table: RopeTable | undefined): void {
  table?.cos.free();
  table?.sin.free();
}

/** Whether every batch entry starts at the same position. */
function uniform(offsets: readonly number[]): boolean {
  return offsets.every((o) => o === offsets[0]);
}

/**
 * RoPE in the WebAssembly SIMD kernel (batches split across threads) when x and out live in the
 * heap and hd is a multiple of 4, else `ropeKernel`. Same table values, so the same results; the
 * kernel's expanded tables are cached per frequency table and scale (see cachedTable), so a decode
 * step computes no sine or cosine. Batch entry b starts at position offsets[b].
 */
export function ropeInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  shape: Shape,
  offsets: readonly number[],
  freqs: readonly number[],
  scale: number,
  out: CpuStorage,
): void {
  const [, t, , hd] = shape;
  const runtime = kernelRuntime(settings);
  const [xAddress, outAddress] = [x.address, out.address];
  if (!runtime || xAddress === undefined || outAddress === undefined || hd % 4 !== 0 || x.length === 0) {
    ropeKernel(x.f32, shape, offsets, freqs, scale, out.f32);
    return;
  }
  const same = uniform(offsets);
  // One table for the call: from the first entry's position when all share it, else from 0 to the last.
  const first = same ? offsets[0] : 0;
  const cached = cachedTable(freqs, scale, first, Math.max(...offsets) + t - first);
  if (cached) {
    const [cosAddress, sinAddress] = [cached.cos.address, cached.sin.address];
    if (cosAddress !== undefined && sinAddress !== undefined) {
      runRope(runtime, settings.threads, xAddress, cosAddress, sinAddress, outAddress, shape, offsets);
      return;
    }
  }
  if (!same) {
    ropeKernel(x.f32, shape, offsets, freqs, scale, out.f32);
    return;
  }
  // Rows [offset, offset + t) only, in tables of this call.
  const offset = offsets[0];
  const table: RopeTable = {
    freqs: Float64Array.from(freqs),
    source: freqs,
    scale,
    cos: new CpuStorage('f32', t * hd, false),
    sin: new CpuStorage('f32', t * hd, false),
    filled: 0,
  };
  try {
    const [cosAddress, sinAddress] = [table.cos.address, table.sin.address];
    if (cosAddress === undefined || sinAddress === undefined) {
      ropeKernel(x.f32, shape, offsets, freqs, scale, out.f32);
      return;
    }
    fillRows(table, freqs, offset, offset + t, 0);
    const rowZero = offsets.map(() => 0);
    runRope(runtime, settings.threads, xAddress, cosAddress, sinAddress, outAddress, shape, rowZero);
  } finally {
    freeTable(table);
  }
}

/**
 * The kernel on x [B, T, H, hd] with tables whose row r holds position r, entry b's rows from table row
 * rows[b]: runs of entries with the same row go to one chunk, split across threads.
 */
function runRope(
  runtime: WasmRuntime,
  threads: number,
  xAddress: number,
  cosAddress: number,
  sinAddress: number,
  outAddress: number,
  [b, t, h, hd]: Shape,
  rows: readonly number[],
): void {
  const batchBytes = 4 * t * h * hd;
  const micros = b * t * h * hd * MICROS_PER_ELEMENT;
  forkJoin(runtime, threads, ROPE_KERNEL, micros, (used) => {
    const per = Math.ceil(b / Math.min(b, 2 * used));
    const chunks: KernelArgs<typeof ROPE_KERNEL>[] = [];
    for (let start = 0; start < b; ) {
      let count = 1;
      while (count < per && start + count < b && rows[start + count] === rows[start]) count++;
      const offsetBytes = start * batchBytes;
      const rowBytes = rows[start] * hd * 4;
      chunks.push([
        xAddress + offsetBytes,
        cosAddress + rowBytes,
        sinAddress + rowBytes,
        outAddress + offsetBytes,
        count,
        t,
        h,
        hd,
      ]);
      start += count;
    }
    return chunks;
  });
}

/**
 * Rotates pairs (2i, 2i+1) of x [B, T, H, hd] of entry b by (offsets[b] + t) * freqs[i] and scales them by
 * `scale`. On float32 values the frequencies, angles and their cosines and sines are float32, like llama2.c;
 * on float64 values (precision 'f64') all of it is float64.
 */
export function ropeKernel(
  x: FloatArray,
  shape: Shape,
  offsets: readonly number[],
  freqs: readonly number[],
  scale: number,
  out: FloatArray,
): void {
  const [b, t, h, hd] = shape;
  const half = hd / 2;
  let tables = ropeTables(t, freqs, offsets[0] ?? 0, scale, x instanceof Float32Array);
  for (let bi = 0; bi < b; bi++) {
    if (bi > 0 && offsets[bi] !== offsets[bi - 1])
      tables = ropeTables(t, freqs, offsets[bi], scale, x instanceof Float32Array);
    const { cos, sin } = tables;
    for (let p = 0; p < t; p++) {
      for (let head = 0; head < h; head++) {
        const o = ((bi * t + p) * h + head) * hd;
        for (let i = 0; i < half; i++) {
          const c = cos[p * half + i];
          const s = sin[p * half + i];
          const x0 = x[o + 2 * i];
          const x1 = x[o + 2 * i + 1];
          out[o + 2 * i] = x0 * c - x1 * s;
          out[o + 2 * i + 1] = x0 * s + x1 * c;
        }
      }
    }
  }
}

/** Rotary position embedding (`ropeInto`). */
export function ropeKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'rope'> {
  return {
    rope: (x, offsets, freqs, scale) =>
      ctx.out(sizeOf(x.shape), (o) => ropeInto(ctx.settings, ctx.get(x), x.shape, offsets, freqs, scale, o)),
  };
}
