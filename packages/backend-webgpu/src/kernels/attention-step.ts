import type { AttentionStepParams, FusedKernels, TensorInfo } from '@loom/tensor';
import type { GpuRuntime } from '../runtime';
import { attention } from './attention';
import { matvecInto, rowsTimesWeight } from './matvec';
import { normedPairs, normedPairsLayout, normedPairsParams } from './normed-pairs';

function layoutFor(half: number) {
  return normedPairsLayout()
    .scalar('qPairs', 'u32')
    .scalar('kPairs', 'u32')
    .scalar('half', 'u32')
    .scalar('positions', 'u32')
    .scalar('offset', 'u32')
    .scalar('qWidth', 'u32')
    .scalar('kvWidth', 'u32')
    .scalar('scale', 'f32')
    .array('freqs', 'f32', half);
}

/** Which of q, k, v (m) and which pair i of its channels unit u computes: q's pairs first, then k's, then v's. */
const SELECT = `var i = u;
  if (u >= p.qPairs + p.kPairs) {
    m = 2u;
    i = u - p.qPairs - p.kPairs;
  } else if (u >= p.qPairs) {
    m = 1u;
    i = u - p.qPairs;
  }
  rowA = 2u * i;
  rowB = rowA + 1u;`;

/**
 * Channels (2i, 2i+1) of q, k or v: q's and k's turned by RoPE at the step's position (pair i mod hd/2 of its
 * head), then q to its buffer [B, H·hd], k and v to row `offset` of the store [B, S, Hkv·hd].
 */
const EPILOGUE = `let kv = (r * p.positions + p.offset) * p.kvWidth;
    if (m == 2u) {
      values[kv + rowA] = d0;
      values[kv + rowB] = d1;
    } else {
      let f = i % p.half;
      let angle = f32(p.offset) * p.freqs[f / 4u][f % 4u];
      let c = p.scale * cos(angle);
      let sn = p.scale * sin(angle);
      let even = d0 * c - d1 * sn;
      let odd = d0 * sn + d1 * c;
      if (m == 0u) {
        q[r * p.qWidth + rowA] = even;
        q[r * p.qWidth + rowB] = odd;
      } else {
        keys[kv + rowA] = even;
        keys[kv + rowB] = odd;
      }
    }`;

/**
 * One decode step of a llama attention block in three dispatches, where the separate ops take eleven: the norm,
 * the q, k and v products, RoPE and the store's new row in one (a unit per pair of channels, `normedPairs`);
 * the attention over the store; the output product and the residual into `out` (`matvecInto`).
 */
function attentionStep(
  rt: GpuRuntime,
  out: TensorInfo,
  x: TensorInfo,
  normWeight: TensorInfo,
  wq: TensorInfo,
  wk: TensorInfo,
  wv: TensorInfo,
  wo: TensorInfo,
  keys: TensorInfo,
  values: TensorInfo,
  params: AttentionStepParams,
): void {
  const [batch, , dim] = x.shape;
  const [, positions, kvHeads, hd] = keys.shape;
  const heads = wq.shape[0] / hd;
  const half = hd / 2;
  if (batch * dim === 0) return;
  const q = rt.alloc(batch * heads * hd, 'f32'); // [B, H·hd]
  const qPairs = heads * half;
  const kPairs = kvHeads * half;
  const units = qPairs + 2 * kPairs;
  const layout = layoutFor(half);
  normedPairs(rt, {
    key: `qkvRope:${Math.ceil(half / 4)}`,
    x: rt.storage(x.id),
    norm: rt.storage(normWeight.id),
    rows: batch,
    dim,
    weights: [rt.storage(wq.id), rt.storage(wk.id), rt.storage(wv.id)],
    sources: [
      { a: 0, b: 0 },
      { a: 1, b: 1 },
      { a: 2, b: 2 },
    ],
    outputs: [
      { name: 'q', storage: q },
      { name: 'keys', storage: rt.storage(keys.id) },
      { name: 'values', storage: rt.storage(values.id) },
    ],
    units,
    layout,
    params: layout.pack({
      ...normedPairsParams(batch, units, dim, params.eps),
      qPairs,
      kPairs,
      half,
      positions,
      offset: params.attention.offset,
      qWidth: heads * hd,
      kvWidth: kvHeads * hd,
      scale: params.ropeScale,
      freqs: params.inverseFrequencies,
    }),
    select: SELECT,
    epilogue: EPILOGUE,
  });
  const heads4 = { id: q, shape: [batch, 1, heads, hd], dtype: 'f32' } as const;
  const attended = attention(rt, heads4, keys, values, params.attention); // [B, 1, H, hd]
  const spec = rowsTimesWeight(batch, dim, heads * hd);
  matvecInto(rt, rt.storage(out.id), attended, rt.storage(wo.id), spec, {
    kind: 'residual',
    storage: rt.storage(x.id),
  });
  rt.release(q);
  rt.release(attended);
}

/** The attention half of a decode step (`attentionStep` above). */
export function attentionStepKernels(rt: GpuRuntime): Pick<FusedKernels, 'attentionStep'> {
  return {
    attentionStep: (out, x, normWeight, wq, wk, wv, wo, keys, values, params) =>
      attentionStep(rt, out, x, normWeight, wq, wk, wv, wo, keys, values, params),
  };
}
