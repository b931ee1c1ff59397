import type { AttentionStepParams, FusedKernels, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { attention } from './attention';
import { rowsTimesWeight } from './matvec';
import { normedPairs, normedPairsBuffers, normedPairsLayout, normedPairsParams } from './normed-pairs';
import { type GpuWeight, gpuWeight, weightProductInto } from './weight-product';

function layoutFor(half: number) {
  return normedPairsLayout()
    .scalar('pairs0', 'u32')
    .scalar('pairs1', 'u32')
    .scalar('half', 'u32')
    .scalar('positions', 'u32')
    .scalar('offset', 'u32')
    .scalar('qWidth', 'u32')
    .scalar('kvWidth', 'u32')
    .scalar('scale', 'f32')
    .array('freqs', 'f32', half);
}

/** One of q, k and v as the first dispatch computes it: a unit per pair of its channels. */
interface Projection {
  readonly weight: GpuWeight;
  readonly pairs: number;
  /** The buffer it writes, and where row r's channels start in it (WGSL). */
  readonly output: { readonly name: string; readonly storage: GpuStorage };
  readonly base: string;
  /** Whether RoPE turns its pairs (q and k). */
  readonly rope: boolean;
}

/**
 * Which of the dispatch's `count` projections (m) and which pair i of its channels unit u computes: the first's
 * pairs (`p.pairs0` of them), then the second's (`p.pairs1`), then the third's.
 */
function selectCode(count: number): string {
  const branches = ['p.pairs0', 'p.pairs0 + p.pairs1']
    .slice(0, count - 1)
    .map((start, j) => `if (u >= ${start}) {\n    m = ${j + 1}u;\n    i = u - (${start});\n  }`);
  return `var i = u;
  ${branches.reverse().join(' else ')}
  rowA = 2u * i;
  rowB = rowA + 1u;`;
}

/** Channels (2i, 2i+1) turned by RoPE at the step's position (pair i mod hd/2 of its head) into `even`, `odd`. */
const ROPE = `let f = i % p.half;
      let angle = f32(p.offset) * p.freqs[f / 4u][f % 4u];
      let c = p.scale * cos(angle);
      let sn = p.scale * sin(angle);
      let even = d0 * c - d1 * sn;
      let odd = d0 * sn + d1 * c;`;

/** Channels (2i, 2i+1) of projection m of `projections` written to its buffer, turned first where it takes RoPE. */
function epilogueCode(projections: readonly Projection[]): string {
  return projections
    .map(({ output, base, rope }, m) => {
      const [even, odd] = rope ? ['even', 'odd'] : ['d0', 'd1'];
      return `if (m == ${m}u) {
      ${rope ? ROPE : ''}
      ${output.name}[${base} + rowA] = ${even};
      ${output.name}[${base} + rowB] = ${odd};
    }`;
    })
    .join(' else ');
}

/**
 * q, k and v in order, in as few dispatches as the device's storage-buffer limit allows: one where it allows all
 * three (11 buffers with three quantized weights), else two, since any two fit in WebGPU's guaranteed 8.
 */
function dispatchesOf(rt: GpuRuntime, projections: readonly Projection[]): Projection[][] {
  const fits = (group: readonly Projection[]) =>
    normedPairsBuffers(
      group.map(({ weight }) => weight.format),
      group.length,
    ) <= rt.limits.maxStorageBuffersPerShaderStage;
  const groups: Projection[][] = [];
  for (const projection of projections) {
    const last = groups[groups.length - 1];
    if (last !== undefined && fits([...last, projection])) last.push(projection);
    else groups.push([projection]);
  }
  return groups;
}

/** The four projections of an attention block, as the kernel binds them. */
interface AttentionWeights {
  readonly wq: GpuWeight;
  readonly wk: GpuWeight;
  readonly wv: GpuWeight;
  readonly wo: GpuWeight;
}

/**
 * One decode step of a llama attention block in three dispatches whatever the projections' formats, where the
 * separate ops take eleven: the norm, the q, k and v products, RoPE and the store's new row in one (a unit per pair
 * of channels, `normedPairs`; two where the device binds too few storage buffers, see `dispatchesOf`); the
 * attention over the store; the output product and the residual into `out` (`weightProductInto`). The last two
 * bind at most 5 buffers. `heads` query heads.
 */
function attentionStep(
  rt: GpuRuntime,
  out: TensorInfo,
  x: TensorInfo,
  normWeight: TensorInfo,
  heads: number,
  { wq, wk, wv, wo }: AttentionWeights,
  keys: TensorInfo,
  values: TensorInfo,
  params: AttentionStepParams,
): void {
  const [batch, , dim] = x.shape;
  const [, positions, kvHeads, hd] = keys.shape;
  const half = hd / 2;
  if (batch * dim === 0) return;
  const q = rt.alloc(batch * heads * hd, 'f32'); // [B, H·hd]
  const store = '(r * p.positions + p.offset) * p.kvWidth'; // row `offset` of [B, S, Hkv·hd]
  const projections: Projection[] = [
    { weight: wq, pairs: heads * half, output: { name: 'q', storage: q }, base: 'r * p.qWidth', rope: true },
    {
      weight: wk,
      pairs: kvHeads * half,
      output: { name: 'keys', storage: rt.storage(keys.id) },
      base: store,
      rope: true,
    },
    {
      weight: wv,
      pairs: kvHeads * half,
      output: { name: 'values', storage: rt.storage(values.id) },
      base: store,
      rope: false,
    },
  ];
  const layout = layoutFor(half);
  for (const group of dispatchesOf(rt, projections)) {
    const units = group.reduce((n, { pairs }) => n + pairs, 0);
    normedPairs(rt, {
      key: `qkvRope:${group.map(({ output }) => output.name).join('+')}:${Math.ceil(half / 4)}`,
      x: rt.storage(x.id),
      norm: rt.storage(normWeight.id),
      rows: batch,
      dim,
      weights: group.map(({ weight }) => weight),
      sources: group.map((_, m) => ({ a: m, b: m })),
      outputs: group.map(({ output }) => output),
      units,
      layout,
      params: layout.pack({
        ...normedPairsParams(batch, units, dim, params.eps),
        pairs0: group[0].pairs,
        pairs1: group[1]?.pairs ?? 0,
        half,
        positions,
        offset: params.attention.offset,
        qWidth: heads * hd,
        kvWidth: kvHeads * hd,
        scale: params.ropeScale,
        freqs: params.inverseFrequencies,
      }),
      select: selectCode(group.length),
      epilogue: epilogueCode(group),
    });
  }
  const heads4 = { id: q, shape: [batch, 1, heads, hd], dtype: 'f32' } as const;
  const attended = attention(rt, heads4, keys, values, params.attention); // [B, 1, H, hd]
  const spec = rowsTimesWeight(batch, dim, heads * hd);
  weightProductInto(rt, rt.storage(out.id), attended, wo, spec, {
    kind: 'residual',
    storage: rt.storage(x.id),
  });
  rt.release(q);
  rt.release(attended);
}

/** The attention half of a decode step (`attentionStep` above). */
export function attentionStepKernels(rt: GpuRuntime): Pick<FusedKernels, 'attentionStep'> {
  return {
    attentionStep: (
      out,
      x,
      normWeight,
      wq,
      wqScales,
      wk,
      wkScales,
      wv,
      wvScales,
      wo,
      woScales,
      keys,
      values,
      params,
    ) => {
      const { formats } = params;
      const weights = {
        wq: gpuWeight(rt, wq, wqScales, formats.wq),
        wk: gpuWeight(rt, wk, wkScales, formats.wk),
        wv: gpuWeight(rt, wv, wvScales, formats.wv),
        wo: gpuWeight(rt, wo, woScales, formats.wo),
      };
      attentionStep(rt, out, x, normWeight, wq.shape[0] / keys.shape[3], weights, keys, values, params);
    },
  };
}
