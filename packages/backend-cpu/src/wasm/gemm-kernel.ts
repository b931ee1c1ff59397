import {
  f32,
  type KernelFeatures,
  type Local,
  lane,
  load,
  mulAdd,
  type Operand,
  op,
  scalar,
  shuffle32,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, sub, mul, min, bytes } = scalar;

/** Blocking of the packed matrix product (sizes in elements). */
export interface GemmConfig {
  /** Rows of the register tile. */
  readonly mr: number;
  /** Columns of the register tile, in 4-lane vectors. */
  readonly nv: number;
  /** Depth of one packed panel pair (L1/L2 blocking of k). */
  readonly kc: number;
  /** Rows of A packed at once (a multiple of mr; the packed block stays in L2). */
  readonly mc: number;
  /** Columns of B packed at once (a multiple of 4 * nv; the packed block stays in L3). */
  readonly nc: number;
}

/** Where the per-thread work area holds packed A, packed B and the edge tile (byte offsets). */
export interface GemmLayout {
  readonly packB: number;
  readonly tile: number;
  readonly bytes: number;
}

export function gemmLayout(config: GemmConfig): GemmLayout {
  const nr = 4 * config.nv;
  if (config.mc % config.mr !== 0)
    throw new Error(`gemm config: mc ${config.mc} is not a multiple of mr ${config.mr}`);
  if (config.nc % nr !== 0) throw new Error(`gemm config: nc ${config.nc} is not a multiple of ${nr}`);
  const packB = config.mc * config.kc * 4;
  const tile = packB + config.kc * config.nc * 4;
  return { packB, tile, bytes: tile + config.mr * nr * 4 };
}

/**
 * Register tile and cache blocking of the matrix product kernel for the engine's features. With separate multiplies
 * and adds each product needs a scratch register, so 4 x 8 (8 accumulators) is the largest tile that fits x64's 16
 * vector registers; with relaxed SIMD's fused multiply-add 6 x 8 (12 accumulators) fits and ran 15% faster (`pnpm
 * bench matmul`, Node 26, one thread), while 4 x 12 and 3 x 16 ran slower than 4 x 8. V8 before 13.6 (`wideTiles`
 * false) loads all of a loop step's vectors before its arithmetic, so a 6 x 8 tile's 6 splats of A spill there, and
 * takes the 4 x 8 tile. (A 6 x 8 tile whose A values waited in general registers, each moved to a vector and splat
 * next to its multiply-adds, ran 52-58 GFLOP/s on a Zen 5 but 34-36 on a Zen 4, whose moves from general registers
 * queue behind the multiply-adds; the 4 x 8 tile with splat loads ran 48-52 there, one thread, Node 20.) Blocking:
 * kc 768 packs a stories110M-shape projection's whole depth at once (each weight row read whole, A packed and C
 * written once per product) and nc 1024 keeps the packed block of B (kc x nc, 3 MiB) to one pass of L3 per block of
 * A. Against kc 256, nc 2048, 110M prefill of 128 tokens on 2 threads (3 alternations): Node 20 280.8-284.9 ->
 * 258.8-267.5 ms, Node 26 246-253 -> 240-243, plain SIMD 302-309 -> 295-298; `pnpm bench generate` 489-494 ->
 * 515-528 tok/s; [1024,1024]² 20.6-21.7 -> 20.0-20.3 ms; the training step the same within the window's noise. kc
 * 384, 512 and 1024 and nc 512, 768 and 2048 fell in between.
 */
export function gemmConfig(features: KernelFeatures): GemmConfig {
  return features.relaxedMadd && features.wideTiles ? WIDE_CONFIG : NARROW_CONFIG;
}

const NARROW_CONFIG: GemmConfig = { mr: 4, nv: 2, kc: 768, mc: 128, nc: 1024 };
const WIDE_CONFIG: GemmConfig = { mr: 6, nv: 2, kc: 768, mc: 120, nc: 1024 };

/** Bytes of a thread's work area: enough for the gemm of either configuration. */
export const GEMM_WORK_BYTES = Math.max(gemmLayout(NARROW_CONFIG).bytes, gemmLayout(WIDE_CONFIG).bytes);

const I = ValType.i32;
const V = ValType.v128;

/**
 * `gemm`: for each of `batch` entries, C[m, n] = A(i, p) B(p, j) summed over p, where A(i, p) is
 * the f32 at a + 4 (i rsA + p csA), B(p, j) at b + 4 (p rsB + j csB), and C is row-major with row
 * stride ldc. Operands move by aStep, bStep, cStep bytes between entries. With `bias` (the byte
 * address of n values, 0 for none), each entry's C then gets bias[j] added to its column j, a pass
 * over the block this thread just wrote (in its caches) instead of a second op over an output
 * gone cold: the same f32 sums as a product and then an add. The thread's `work` area holds
 * GEMM_WORK_BYTES bytes. Requires k >= 1. Parameters: pointers and steps in bytes, strides in
 * elements.
 */
export const GEMM = kernel({
  name: 'gemm',
  params: i32(
    'batch',
    'aStep',
    'bStep',
    'cStep',
    'm',
    'n',
    'k',
    'a',
    'rsA',
    'csA',
    'b',
    'rsB',
    'csB',
    'c',
    'ldc',
    'bias',
  ),
  emit(
    f,
    { batch, aStep, bStep, cStep, m, n, k, a, rsA, csA, b, rsB, csB, c, ldc, bias, work },
    { mod, features },
  ) {
    const config = gemmConfig(features);
    const packA = mod.func('gemm_pack_a', [I, I, I, I, I, I], (g) => emitPackA(g, config), {
      exported: false,
    });
    const packB = mod.func('gemm_pack_b', [I, I, I, I, I, I], (g) => emitPackB(g, config), {
      exported: false,
    });
    const macro = mod.func('gemm_macro', [I, I, I, I, I, I, I, I, I], (g) => emitMacro(g, config, features), {
      exported: false,
    });
    const layout = gemmLayout(config);
    const [entry, jc, pc, ic, ncur, kcur, mcur, row, col, cRow] = f.locals(I, 10);
    f.for(entry, 0, batch, 1, () => {
      f.for(jc, 0, n, config.nc, () => {
        f.set(ncur, min(config.nc, sub(n, jc)));
        f.for(pc, 0, k, config.kc, () => {
          f.set(kcur, min(config.kc, sub(k, pc)));
          f.call(
            packB,
            add(b, bytes(add(mul(pc, rsB), mul(jc, csB)))),
            rsB,
            csB,
            kcur,
            ncur,
            add(work, layout.packB),
          );
          f.for(ic, 0, m, config.mc, () => {
            f.set(mcur, min(config.mc, sub(m, ic)));
            f.call(packA, add(a, bytes(add(mul(ic, rsA), mul(pc, csA)))), rsA, csA, mcur, kcur, work);
            f.call(
              macro,
              kcur,
              mcur,
              ncur,
              work,
              add(work, layout.packB),
              add(c, bytes(add(mul(ic, ldc), jc))),
              ldc,
              op('i32.gt_s', pc, 0),
              add(work, layout.tile),
            );
          });
        });
      });
      f.if(bias, () => {
        const vectorColumns = op('i32.and', n, -4);
        f.for(row, 0, m, 1, () => {
          f.set(cRow, add(c, bytes(mul(row, ldc))));
          f.for(col, 0, vectorColumns, 4, () => {
            const at = add(cRow, bytes(col));
            f.storeV128(
              at,
              simd('f32x4.add', simdLoad('v128.load', at), simdLoad('v128.load', add(bias, bytes(col)))),
            );
          });
          f.for(col, vectorColumns, n, 1, () => {
            const at = add(cRow, bytes(col));
            f.store(
              'f32.store',
              at,
              op('f32.add', load('f32.load', at), load('f32.load', add(bias, bytes(col)))),
            );
          });
        });
      });
      f.set(a, add(a, aStep));
      f.set(b, add(b, bStep));
      f.set(c, add(c, cStep));
    });
  },
});

/**
 * pack_a(src, rsA, csA, mc, kc, dst): panels of mr rows, each stored k-major (mr values per
 * step of k), the last panel padded with zeros.
 */
function emitPackA(f: FunctionBuilder, { mr }: GemmConfig): void {
  const [src, rs, cs, mc, kc, dst] = f.params;
  const [ip, height] = f.locals(I, 2);
  const panel = panelLocals(f);
  f.for(ip, 0, mc, mr, () => {
    f.set(height, min(mr, sub(mc, ip)));
    const full = op('i32.eq', height, mr);
    const base = add(src, bytes(mul(ip, rs)));
    emitPanel(f, panel, {
      base,
      lineStride: rs,
      stepStride: cs,
      lines: height,
      width: mr,
      steps: kc,
      dst,
      full,
    });
    f.set(dst, add(dst, mul(kc, 4 * mr)));
  });
}

/**
 * pack_b(src, rsB, csB, kc, nc, dst): panels of nr = 4 nv columns, each stored k-major, the last
 * panel padded with zeros.
 */
function emitPackB(f: FunctionBuilder, { nv }: GemmConfig): void {
  const nr = 4 * nv;
  const [src, rs, cs, kc, nc, dst] = f.params;
  const [jp, width] = f.locals(I, 2);
  const panel = panelLocals(f);
  f.for(jp, 0, nc, nr, () => {
    f.set(width, min(nr, sub(nc, jp)));
    const full = op('i32.eq', width, nr);
    const base = add(src, bytes(mul(jp, cs)));
    emitPanel(f, panel, {
      base,
      lineStride: cs,
      stepStride: rs,
      lines: width,
      width: nr,
      steps: kc,
      dst,
      full,
    });
    f.set(dst, add(dst, mul(kc, 4 * nr)));
  });
}

/** Scratch locals of `emitPanel`. */
interface PanelLocals {
  readonly line: Local;
  readonly p: Local;
  readonly s: Local;
  readonly d: Local;
  readonly stepBytes: Local;
  readonly lineBytes: Local;
  readonly vectorSteps: Local;
  readonly ptr: readonly Local[];
  readonly v: readonly Local[];
  readonly t: readonly Local[];
}

function panelLocals(f: FunctionBuilder): PanelLocals {
  const [line, p, s, d, stepBytes, lineBytes, vectorSteps] = f.locals(I, 7);
  return {
    line,
    p,
    s,
    d,
    stepBytes,
    lineBytes,
    vectorSteps,
    ptr: f.locals(I, 4),
    v: f.locals(V, 4),
    t: f.locals(V, 4),
  };
}

/** One packed panel: `lines` source lines (rows of A or columns of B) of `steps` values each. */
interface PanelSpec {
  /** Address of the first value of the first line. */
  readonly base: Operand;
  /** Elements between consecutive lines, and between consecutive steps along a line. */
  readonly lineStride: Operand;
  readonly stepStride: Operand;
  /** Lines present (the rest of the panel is zero), and lines per panel (a multiple of 4 for the vector paths). */
  readonly lines: Operand;
  readonly width: number;
  readonly steps: Operand;
  readonly dst: Operand;
  /** Whether all `width` lines are present. */
  readonly full: Operand;
}

/**
 * Packs a panel step-major: dst[step * width + line]. Full panels whose values are contiguous
 * across lines copy vectors; full panels contiguous along lines transpose 4 x 4 blocks (and a
 * last pair of lines 2 x 4); the rest (edge panels, other strides, the last steps) go value by
 * value. A width of 4k + 2 (the 6-row tile of A) moves its last two values as one f64.
 */
function emitPanel(f: FunctionBuilder, l: PanelLocals, spec: PanelSpec): void {
  const { width } = spec;
  const quads = Math.floor(width / 4);
  const pair = width % 4 === 2;
  f.set(l.stepBytes, bytes(spec.stepStride));
  f.set(l.lineBytes, bytes(spec.lineStride));
  f.set(l.vectorSteps, 0);
  const copyAcross = () => {
    f.set(l.s, spec.base);
    f.set(l.d, spec.dst);
    f.for(l.p, 0, spec.steps, 1, () => {
      for (let v = 0; v < quads; v++) f.storeV128(l.d, simdLoad('v128.load', l.s, 16 * v), 16 * v);
      if (pair) f.store('f64.store', l.d, load('f64.load', l.s, 16 * quads), 16 * quads);
      f.set(l.s, add(l.s, l.stepBytes));
      f.set(l.d, add(l.d, 4 * width));
    });
    f.set(l.vectorSteps, spec.steps);
  };
  // Lines [4 g, 4 g + count) read 4 steps at a time, each step's values stored at dst + 16 g.
  const transposeLines = (g: number, count: 2 | 4) => {
    for (let i = 0; i < count; i++) f.set(l.ptr[i], add(spec.base, mul(l.lineBytes, 4 * g + i)));
    f.set(l.d, add(spec.dst, 16 * g));
    f.for(l.p, 0, l.vectorSteps, 4, () => {
      for (let i = 0; i < count; i++) f.set(l.v[i], simdLoad('v128.load', l.ptr[i]));
      f.set(l.t[0], shuffle32(l.v[0], l.v[1], [0, 4, 1, 5]));
      f.set(l.t[1], shuffle32(l.v[0], l.v[1], [2, 6, 3, 7]));
      if (count === 4) {
        f.set(l.t[2], shuffle32(l.v[2], l.v[3], [0, 4, 1, 5]));
        f.set(l.t[3], shuffle32(l.v[2], l.v[3], [2, 6, 3, 7]));
        f.storeV128(l.d, shuffle32(l.t[0], l.t[2], [0, 1, 4, 5]));
        f.storeV128(l.d, shuffle32(l.t[0], l.t[2], [2, 3, 6, 7]), 4 * width);
        f.storeV128(l.d, shuffle32(l.t[1], l.t[3], [0, 1, 4, 5]), 8 * width);
        f.storeV128(l.d, shuffle32(l.t[1], l.t[3], [2, 3, 6, 7]), 12 * width);
      } else {
        for (let q = 0; q < 4; q++) {
          f.store('f64.store', l.d, lane('f64x2.extract_lane', l.t[q >> 1], q & 1), 4 * width * q);
        }
      }
      for (let i = 0; i < count; i++) f.set(l.ptr[i], add(l.ptr[i], 16));
      f.set(l.d, add(l.d, 16 * width));
    });
  };
  const transposeAlong = () => {
    f.set(l.vectorSteps, op('i32.and', spec.steps, -4));
    for (let g = 0; g < quads; g++) transposeLines(g, 4);
    if (pair) transposeLines(quads, 2);
  };
  if (width % 4 === 0 || pair) {
    f.if(op('i32.and', spec.full, op('i32.eq', spec.stepStride, 1)), transposeAlong, () =>
      f.if(op('i32.and', spec.full, op('i32.eq', spec.lineStride, 1)), copyAcross),
    );
  }
  // Whatever the vector paths left: steps [vectorSteps, steps) of every line, zeros past `lines`.
  f.for(l.line, 0, width, 1, () => {
    f.set(l.d, add(spec.dst, bytes(add(mul(l.vectorSteps, width), l.line))));
    f.if(
      op('i32.lt_s', l.line, spec.lines),
      () => {
        f.set(l.s, add(spec.base, add(mul(l.line, l.lineBytes), mul(l.vectorSteps, l.stepBytes))));
        f.for(l.p, l.vectorSteps, spec.steps, 1, () => {
          f.store('f32.store', l.d, load('f32.load', l.s));
          f.set(l.s, add(l.s, l.stepBytes));
          f.set(l.d, add(l.d, 4 * width));
        });
      },
      () => {
        f.for(l.p, l.vectorSteps, spec.steps, 1, () => {
          f.store('f32.store', l.d, f32(0));
          f.set(l.d, add(l.d, 4 * width));
        });
      },
    );
  });
}

/**
 * macro(kc, mc, nc, packedA, packedB, c, ldc, accumulate, tile): C[mc, nc] (+)= the packed
 * block product, one mr x nr register tile at a time; partial edge tiles go through `tile`.
 */
function emitMacro(f: FunctionBuilder, { mr, nv }: GemmConfig, features: KernelFeatures): void {
  const nr = 4 * nv;
  const [kc, mc, nc, packedA, packedB, c, ldc, accumulate, tile] = f.params;
  const [jr, ir, rows, cols, pa, pb, panelB, steps, cRow, ldcBytes, r, col, dst] = f.locals(I, 13);
  const acc: Local[][] = Array.from({ length: mr }, () => f.locals(V, nv));
  const bv = f.locals(V, nv);
  const splat = f.local(V);

  f.set(ldcBytes, bytes(ldc));
  f.for(jr, 0, nc, nr, () => {
    f.set(cols, min(nr, sub(nc, jr)));
    f.set(panelB, add(packedB, mul(bytes(jr), kc)));
    f.for(ir, 0, mc, mr, () => {
      f.set(rows, min(mr, sub(mc, ir)));
      f.set(pa, add(packedA, mul(bytes(ir), kc)));
      f.set(pb, panelB);
      for (const row of acc) for (const a of row) f.set(a, v128Zero);
      f.set(steps, kc);
      f.loop((again) => {
        for (let v = 0; v < nv; v++) f.set(bv[v], simdLoad('v128.load', pb, 16 * v));
        for (let i = 0; i < mr; i++) {
          f.set(splat, simdLoad('v128.load32_splat', pa, 4 * i));
          for (let v = 0; v < nv; v++) f.set(acc[i][v], mulAdd(features, splat, bv[v], acc[i][v]));
        }
        f.set(pa, add(pa, 4 * mr));
        f.set(pb, add(pb, 4 * nr));
        f.set(steps, sub(steps, 1));
        f.brIf(again, steps);
      });

      f.set(cRow, add(c, bytes(add(mul(ir, ldc), jr))));
      f.if(
        op('i32.and', op('i32.eq', rows, mr), op('i32.eq', cols, nr)),
        () => {
          f.if(
            accumulate,
            () => {
              for (let i = 0; i < mr; i++) {
                for (let v = 0; v < nv; v++) {
                  f.storeV128(
                    cRow,
                    simd('f32x4.add', simdLoad('v128.load', cRow, 16 * v), acc[i][v]),
                    16 * v,
                  );
                }
                f.set(cRow, add(cRow, ldcBytes));
              }
            },
            () => {
              for (let i = 0; i < mr; i++) {
                for (let v = 0; v < nv; v++) f.storeV128(cRow, acc[i][v], 16 * v);
                f.set(cRow, add(cRow, ldcBytes));
              }
            },
          );
        },
        () => {
          for (let i = 0; i < mr; i++) {
            for (let v = 0; v < nv; v++) f.storeV128(tile, acc[i][v], 4 * nr * i + 16 * v);
          }
          f.for(r, 0, rows, 1, () => {
            f.for(col, 0, cols, 1, () => {
              f.set(dst, add(cRow, bytes(col)));
              const value = load('f32.load', add(tile, bytes(add(mul(r, nr), col))));
              f.store(
                'f32.store',
                dst,
                op('select', op('f32.add', load('f32.load', dst), value), value, accumulate),
              );
            });
            f.set(cRow, add(cRow, ldcBytes));
          });
        },
      );
    });
  });
}
