import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

/** Batch entries with their own offsets per launch: the offsets travel in the uniform block. */
const ENTRIES_PER_LAUNCH = 1024;

function layoutFor(half: number, entries: number) {
  return new ParamLayout()
    .scalar('count', 'u32')
    .scalar('heads', 'u32')
    .scalar('steps', 'u32')
    .scalar('half', 'u32')
    .scalar('first', 'u32')
    .scalar('scale', 'f32')
    .array('freqs', 'f32', half)
    .array('offsets', 'u32', entries);
}

/**
 * Rotary embedding of x [B, T, H, hd]: pair (2i, 2i+1) at step t of entry b turns by (offsets[b] + t) * freqs[i]
 * and is scaled by `scale`. The frequencies and offsets come from the host as parameters (one offset for all
 * entries when they share it, else up to ENTRIES_PER_LAUNCH entries' per launch); one thread per pair.
 */
function rope(
  rt: GpuRuntime,
  x: TensorInfo,
  offsets: readonly number[],
  freqs: readonly number[],
  scale: number,
): GpuStorage {
  const [batch, steps, heads, headDim] = x.shape;
  const size = sizeOf(x.shape);
  const out = rt.alloc(size, 'f32');
  const half = headDim / 2;
  if (size === 0) return out;
  const same = offsets.every((o) => o === offsets[0]);
  const perLaunch = same ? batch : ENTRIES_PER_LAUNCH;
  const slots = same ? 1 : Math.min(batch, ENTRIES_PER_LAUNCH);
  const params = layoutFor(half, slots);
  const wg = rt.limits.workgroupSize;
  const entryPairs = steps * heads * half;
  const program = makeProgram(
    `rope:${Math.ceil(half / 4)}:${same ? 'shared' : Math.ceil(slots / 4)}:${wg}`,
    [{ name: 'x', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let local = gid * ${wg}u + lid;
  if (local >= p.count) { return; }
  let idx = p.first * p.half * p.heads * p.steps + local;
  let i = idx % p.half;
  let t = (idx / p.half / p.heads) % p.steps;
  let e = ${same ? '0u' : 'local / (p.half * p.heads * p.steps)'};
  let angle = f32(p.offsets[e / 4u][e % 4u] + t) * p.freqs[i / 4u][i % 4u];
  let c = p.scale * cos(angle);
  let s = p.scale * sin(angle);
  let even = x[2u * idx];
  let odd = x[2u * idx + 1u];
  out[2u * idx] = even * c - odd * s;
  out[2u * idx + 1u] = even * s + odd * c;
}`,
  );
  for (let first = 0; first < batch; first += perLaunch) {
    const entries = Math.min(perLaunch, batch - first);
    const count = entries * entryPairs;
    rt.launch({
      program,
      inputs: [rt.storage(x.id)],
      outputs: [out],
      params: params.pack({
        count,
        heads,
        steps,
        half,
        first,
        scale,
        freqs,
        offsets: same ? [offsets[0]] : offsets.slice(first, first + entries),
      }),
      workgroups: Math.ceil(count / wg),
    });
  }
  return out;
}

/** Rotary position embedding (`rope` above). */
export function ropeKernels(rt: GpuRuntime): Pick<FusedKernels, 'rope'> {
  return { rope: (x, offsets, freqs, scale) => rope(rt, x, offsets, freqs, scale) };
}
