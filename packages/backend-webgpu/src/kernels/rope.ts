import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

function layoutFor(half: number) {
  return new ParamLayout()
    .scalar('count', 'u32')
    .scalar('heads', 'u32')
    .scalar('steps', 'u32')
    .scalar('half', 'u32')
    .scalar('offset', 'u32')
    .scalar('scale', 'f32')
    .array('freqs', 'f32', half);
}

/**
 * Rotary embedding of x [B, T, H, hd]: pair (2i, 2i+1) at step t turns by (offset + t) * freqs[i]
 * and is scaled by `scale`. The frequencies come from the host as parameters; one thread per pair.
 */
function rope(
  rt: GpuRuntime,
  x: TensorInfo,
  offset: number,
  freqs: readonly number[],
  scale: number,
): GpuStorage {
  const [, steps, heads, headDim] = x.shape;
  const size = sizeOf(x.shape);
  const out = rt.alloc(size, 'f32');
  const half = headDim / 2;
  if (size === 0) return out;
  const params = layoutFor(half);
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `rope:${Math.ceil(half / 4)}:${wg}`,
    [{ name: 'x', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let idx = gid * ${wg}u + lid;
  if (idx >= p.count) { return; }
  let i = idx % p.half;
  let t = (idx / p.half / p.heads) % p.steps;
  let angle = f32(p.offset + t) * p.freqs[i / 4u][i % 4u];
  let c = p.scale * cos(angle);
  let s = p.scale * sin(angle);
  let even = x[2u * idx];
  let odd = x[2u * idx + 1u];
  out[2u * idx] = even * c - odd * s;
  out[2u * idx + 1u] = even * s + odd * c;
}`,
  );
  const count = size / 2;
  rt.launch({
    program,
    inputs: [rt.storage(x.id)],
    outputs: [out],
    params: params.pack({ count, heads, steps, half, offset, scale, freqs }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}

/** Rotary position embedding (`rope` above). */
export function ropeKernels(rt: GpuRuntime): Pick<FusedKernels, 'rope'> {
  return { rope: (x, offset, freqs, scale) => rope(rt, x, offset, freqs, scale) };
}
