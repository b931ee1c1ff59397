import { type AttentionSpec, type Shape, visibleKeys } from '@loom/tensor';
import { binaryKernel } from '../binary';
import type { FloatArray } from '../precision';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import { runRowKernel } from '../vectorised';
import { checkedArgs } from '../wasm/kernels';
import { GEMM_FLOPS_PER_MICRO } from '../wasm/matmul-plan';
import type { WasmRuntime } from '../wasm/runtime';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import { SOFTMAX_KERNEL } from '../wasm/softmax-kernel';

/** Most gemm calls of one fork-join (the pool's job block holds 64 chunks). */
const MAX_GEMMS = 64;
/** Most score values (f32) one round keeps in scratch by default, so memory stays bounded. */
const MAX_ROUND_SCORES = 1 << 22;

/** One product of the `gemm` kernel: C[m, n] = A(i, p) B(p, j); strides in elements, addresses in bytes. */
interface Gemm {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly a: number;
  readonly rsA: number;
  readonly csA: number;
  readonly b: number;
  readonly rsB: number;
  readonly csB: number;
  readonly c: number;
  readonly ldc: number;
  /** Repeats, the operands moving by these many bytes each time (default one product). */
  readonly batch?: number;
  readonly aStep?: number;
  readonly bStep?: number;
  readonly cStep?: number;
}

/** Runs independent products, one chunk each, in fork-joins of at most MAX_GEMMS chunks. */
function runGemms(runtime: WasmRuntime, threads: number, gemms: readonly Gemm[]): void {
  for (let first = 0; first < gemms.length; first += MAX_GEMMS) {
    const part = gemms.slice(first, first + MAX_GEMMS);
    let flops = 0;
    for (const g of part) flops += 2 * (g.batch ?? 1) * g.m * g.n * g.k;
    const chunks = part.map((g) =>
      checkedArgs('gemm', [
        g.batch ?? 1,
        g.aStep ?? 0,
        g.bStep ?? 0,
        g.cStep ?? 0,
        g.m,
        g.n,
        g.k,
        g.a,
        g.rsA,
        g.csA,
        g.b,
        g.rsB,
        g.csB,
        g.c,
        g.ldc,
        0,
      ]),
    );
    forkJoin(runtime, threads, 'gemm', flops / GEMM_FLOPS_PER_MICRO, () => chunks);
  }
}

/**
 * The attention sizes: q [B, T, H, hd], k and v [B, keys, Hkv, hd], g = H / Hkv query heads per kv head;
 * s is the width of the window of keys that some query sees (a cache holds more), the most any round covers.
 */
interface Sizes {
  readonly b: number;
  readonly t: number;
  readonly h: number;
  readonly hd: number;
  readonly keys: number;
  readonly s: number;
  readonly hkv: number;
  readonly group: number;
}

/** The byte addresses of `storages`, or undefined when one lives outside the heap. */
function heapAddresses(storages: readonly CpuStorage[]): number[] | undefined {
  const out: number[] = [];
  for (const s of storages) {
    const a = s.address;
    if (a === undefined) return undefined;
    out.push(a);
  }
  return out;
}

/** Scratch storages made for one call, freed together. */
class Scratch {
  readonly #storages: CpuStorage[] = [];

  /** A new f32 storage of `length` values (at least one), or undefined when it does not fit the heap. */
  take(length: number): CpuStorage | undefined {
    const s = new CpuStorage('f32', Math.max(1, length), false);
    this.#storages.push(s);
    return s.address === undefined ? undefined : s;
  }

  /** Frees one storage taken here now (a round's), so that rounds do not add up. */
  drop(storage: CpuStorage): void {
    this.#storages.splice(this.#storages.indexOf(storage), 1);
    storage.free();
  }

  free(): void {
    for (const s of this.#storages) s.free();
  }
}

/**
 * Query rows of a block when the mask narrows the keys (causal, prefix or a window): each block's products cover
 * only the keys its rows see, so a causal prefill computes about (1 + 32 / T) / 2 of the full scores.
 */
const QUERY_BLOCK = 32;

/**
 * Query rows [t0, t1) of batch rows [b0, b1), over the keys [k0, k1) some of them see (k0 >= k1 when none does):
 * several whole batch rows, or blocks of their query rows.
 */
interface Round {
  readonly b0: number;
  readonly b1: number;
  readonly t0: number;
  readonly t1: number;
  readonly k0: number;
  readonly k1: number;
}

/** The round of rows [b0, b1) x [t0, t1) with the keys its queries see. */
function roundOver(spec: AttentionSpec, z: Sizes, b0: number, b1: number, t0: number, t1: number): Round {
  let [k0, k1] = [z.keys, 0];
  for (let batch = b0; batch < b1; batch++) {
    for (let t = t0; t < t1; t++) {
      const { start, end } = visibleKeys(spec, batch, t, z.keys);
      if (start >= end) continue;
      k0 = Math.min(k0, start);
      k1 = Math.max(k1, end);
    }
  }
  return { b0, b1, t0, t1, k0, k1 };
}

/**
 * Rounds of at most `most` scores: blocks of QUERY_BLOCK query rows where the mask narrows the keys (else all of a
 * row's queries, or as many as fit), and as many batch rows per block as fit.
 */
function roundsOf(spec: AttentionSpec, z: Sizes, most: number): Round[] {
  const narrows = spec.mask.kind !== 'none' || spec.window > 0;
  const block = Math.max(1, Math.min(z.t, narrows ? QUERY_BLOCK : z.t, Math.floor(most / (z.h * z.s))));
  const rows = Math.max(1, Math.floor(most / (z.h * block * z.s)));
  const out: Round[] = [];
  for (let b0 = 0; b0 < z.b; b0 += rows) {
    const b1 = Math.min(z.b, b0 + rows);
    for (let t0 = 0; t0 < z.t; t0 += block)
      out.push(roundOver(spec, z, b0, b1, t0, Math.min(z.t, t0 + block)));
  }
  return out;
}

/**
 * Hides the keys each query of a round does not see: -Infinity on those scores ([rows, H, t1 - t0, k1 - k0]),
 * written in place (under a causal mask only the last block of keys has any). Returns the query rows
 * (batch, t) that see no key, whose scores stay finite and whose weights the caller zeros.
 */
function maskScores(spec: AttentionSpec, z: Sizes, round: Round, scores: FloatArray): [number, number][] {
  const [queryRows, width] = [round.t1 - round.t0, round.k1 - round.k0];
  const empty: [number, number][] = [];
  for (let batch = round.b0; batch < round.b1; batch++) {
    for (let t = round.t0; t < round.t1; t++) {
      const { start, end } = visibleKeys(spec, batch, t, z.keys);
      if (start >= end) {
        empty.push([batch, t]);
        continue;
      }
      const [from, to] = [start - round.k0, end - round.k0];
      if (from === 0 && to === width) continue;
      for (let head = 0; head < z.h; head++) {
        const row = (((batch - round.b0) * z.h + head) * queryRows + t - round.t0) * width;
        scores.fill(Number.NEGATIVE_INFINITY, row, row + from);
        scores.fill(Number.NEGATIVE_INFINITY, row + to, row + width);
      }
    }
  }
  return empty;
}

/** Every (batch row, kv head) of a round, with its index among the round's pieces. */
function piecesOf(z: Sizes, round: Round): { batch: number; kvHead: number; index: number }[] {
  const out: { batch: number; kvHead: number; index: number }[] = [];
  for (let batch = round.b0; batch < round.b1; batch++) {
    for (let kvHead = 0; kvHead < z.hkv; kvHead++) {
      out.push({ batch, kvHead, index: (batch - round.b0) * z.hkv + kvHead });
    }
  }
  return out;
}

/**
 * The products scores = q k^T of a round's pieces into `scores` ([rows, Hkv, g, t1 - t0, k1 - k0], one
 * block per piece; q and k read in place, their rows H·hd and Hkv·hd apart), scaled by `operands.scale` (one
 * f32); then the mask, the row softmax into `probs`, and zeros on the rows that see no key.
 */
function attentionWeights(
  settings: CpuKernelSettings,
  runtime: WasmRuntime,
  z: Sizes,
  spec: AttentionSpec,
  operands: { readonly q: number; readonly k: number; readonly scale: CpuStorage },
  round: Round,
  scores: CpuStorage,
  probs: CpuStorage,
): void {
  const [queryRows, width] = [round.t1 - round.t0, round.k1 - round.k0];
  const scoreAddress = scores.address ?? 0;
  const products = piecesOf(z, round).map(({ batch, kvHead, index }) => ({
    // One product per query head of the kv head (batch g).
    batch: z.group,
    aStep: 4 * z.hd,
    bStep: 0,
    cStep: 4 * queryRows * width,
    m: queryRows,
    n: width,
    k: z.hd,
    a: operands.q + 4 * ((batch * z.t + round.t0) * z.h + kvHead * z.group) * z.hd,
    rsA: z.h * z.hd,
    csA: 1,
    b: operands.k + 4 * ((batch * z.keys + round.k0) * z.hkv + kvHead) * z.hd,
    rsB: 1,
    csB: z.hkv * z.hd,
    c: scoreAddress + 4 * index * z.group * queryRows * width,
    ldc: width,
  }));
  runGemms(runtime, settings.threads, products);
  const rows = round.b1 - round.b0;
  const size = rows * z.h * queryRows * width;
  binaryKernel(settings, 'mul', 'f32', scores, [size], operands.scale, [], scores, [size]);
  const empty = maskScores(spec, z, round, scores.f32);
  runRowKernel(settings, SOFTMAX_KERNEL, [scores], [], probs, rows * z.h * queryRows, width);
  const pv = probs.f32;
  for (const [batch, t] of empty) {
    for (let head = 0; head < z.h; head++) {
      const row = (((batch - round.b0) * z.h + head) * queryRows + t - round.t0) * width;
      pv.fill(0, row, row + width);
    }
  }
}

/** The sizes, with the width s of the window of keys some query of `spec` sees (all keys when none sees one). */
function sizesOf(qShape: Shape, kShape: Shape, spec: AttentionSpec): Sizes {
  const [b, t, h, hd] = qShape;
  const [, keys, hkv] = kShape;
  let first = keys;
  let last = 0;
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      const { start, end } = visibleKeys(spec, bi, p, keys);
      if (start >= end) continue;
      first = Math.min(first, start);
      last = Math.max(last, end);
    }
  }
  if (first >= last) [first, last] = [0, keys];
  return { b, t, h, hd, keys, s: last - first, hkv, group: h / hkv };
}

/** Whether the WebAssembly path takes these sizes: work to do, and one query's scores (all heads) within `most`. */
function fits(z: Sizes, most: number): boolean {
  return z.b > 0 && z.t > 0 && z.s > 0 && z.hd > 0 && z.h * z.s <= most;
}

/**
 * Attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] by the WebAssembly `gemm`, `softmax_f32` and
 * element-wise kernels, per (batch row, kv head) for all the query heads that share it, over the window of
 * keys some query sees: scores = scale q k^T, the hidden keys at -Infinity, their softmax, then out = P v in
 * place; q, k and v are read where they lie (no permuted copies). Under a causal or windowed mask the query rows
 * go in blocks of QUERY_BLOCK, each over the keys it sees (a prefill of 128 tokens computes 5/8 of the full
 * scores); long sequences go in blocks too. Returns false when the kernels are off, an operand or a scratch
 * array lives outside the heap, or one query's scores exceed a round; the caller then computes every output
 * element itself. `maxRoundScores` bounds the scores held at once (smaller values test the blocking).
 */
export function attentionGemmInto(
  settings: CpuKernelSettings,
  q: CpuStorage,
  qShape: Shape,
  k: CpuStorage,
  v: CpuStorage,
  kShape: Shape,
  spec: AttentionSpec,
  out: CpuStorage,
  maxRoundScores = MAX_ROUND_SCORES,
): boolean {
  const z = sizesOf(qShape, kShape, spec);
  const runtime = kernelRuntime(settings);
  const operands = heapAddresses([q, k, v, out]);
  if (!runtime || !operands || !fits(z, maxRoundScores)) return false;
  const [qAddress, kAddress, vAddress, outAddress] = operands;
  const scratch = new Scratch();
  try {
    const factor = scratch.take(1);
    if (!factor) return false;
    factor.f32[0] = spec.scale;
    const kvRow = z.hkv * z.hd;
    for (const round of roundsOf(spec, z, maxRoundScores)) {
      const [queryRows, width] = [round.t1 - round.t0, round.k1 - round.k0];
      if (width <= 0) {
        // No query of the round sees a key: their outputs are 0.
        for (let batch = round.b0; batch < round.b1; batch++) {
          const from = (batch * z.t + round.t0) * z.h * z.hd;
          out.f32.fill(0, from, from + queryRows * z.h * z.hd);
        }
        continue;
      }
      const size = (round.b1 - round.b0) * z.h * queryRows * width;
      const [scores, probs] = [scratch.take(size), scratch.take(size)];
      if (!scores || !probs) return false;
      attentionWeights(
        settings,
        runtime,
        z,
        spec,
        { q: qAddress, k: kAddress, scale: factor },
        round,
        scores,
        probs,
      );
      const probAddress = probs.address ?? 0;
      runGemms(
        runtime,
        settings.threads,
        piecesOf(z, round).map(({ batch, kvHead, index }) => ({
          // out rows of query head kvHead·g + i = P v, one product per query head (batch g).
          batch: z.group,
          aStep: 4 * queryRows * width,
          bStep: 0,
          cStep: 4 * z.hd,
          m: queryRows,
          n: z.hd,
          k: width,
          a: probAddress + 4 * index * z.group * queryRows * width,
          rsA: width,
          csA: 1,
          b: vAddress + 4 * ((batch * z.keys + round.k0) * kvRow + kvHead * z.hd),
          rsB: kvRow,
          csB: 1,
          c: outAddress + 4 * ((batch * z.t + round.t0) * z.h + kvHead * z.group) * z.hd,
          ldc: z.h * z.hd,
        })),
      );
      scratch.drop(scores);
      scratch.drop(probs);
    }
    return true;
  } finally {
    scratch.free();
  }
}
