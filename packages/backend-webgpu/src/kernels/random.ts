import { mix32, type RandomKind } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('seedMix', 'u32');

/**
 * random.ts in WGSL. Uniforms are ((bits >>> 8) + 0.5) / 2^24 rounded to f32 exactly as the
 * host rounds the float64 value (ties to even), so they match bit for bit. Normals use
 * Box-Muller written to stay close to the float64 host formula: -ln(u1) through a series when
 * u1 is near 1, and cos(2 pi u2) as -cos(pi (2 u2 - 1)) whose argument is exact.
 */
const RANDOM = `
fn mix(x0: u32) -> u32 {
  var x = x0 ^ (x0 >> 16u);
  x = x * 0x7feb352du;
  x = x ^ (x >> 15u);
  x = x * 0x846ca68bu;
  return x ^ (x >> 16u);
}

fn mantissa(counter: u32) -> u32 {
  return mix(counter ^ p.seedMix) >> 8u;
}

fn uniform_at(counter: u32) -> f32 {
  let m = mantissa(counter);
  if (m < 0x800000u) { return f32(2u * m + 1u) * (1.0 / 33554432.0); }
  return f32(2u * (m + (m & 1u))) * (1.0 / 33554432.0);
}

fn neg_log_uniform(m: u32) -> f32 {
  if (m < 0x800000u) { return -log(f32(2u * m + 1u) * (1.0 / 33554432.0)); }
  let d = f32(0x2000000u - 2u * m - 1u) * (1.0 / 33554432.0);
  if (d < 0.015625) { return d * (1.0 + d * (0.5 + d * (0.33333333 + d * (0.25 + d * 0.2)))); }
  return -log(1.0 - d);
}

fn normal_at(i: u32) -> f32 {
  let radius = sqrt(2.0 * neg_log_uniform(mantissa(2u * i)));
  let t = f32(i32(2u * mantissa(2u * i + 1u) + 1u) - 16777216) * (1.0 / 16777216.0);
  return -radius * cos(3.14159265358979 * t);
}`;

/** Counter-based seeded random values, identical to random.ts on the host. */
export function random(rt: GpuRuntime, kind: RandomKind, size: number, seed: number): GpuStorage {
  const out = rt.alloc(size, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `random:${kind}:${wg}`,
    [],
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${RANDOM}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = ${kind === 'uniform' ? 'uniform_at(i)' : 'normal_at(i)'};
}`,
  );
  rt.launch({
    program,
    inputs: [],
    outputs: [out],
    params: params.pack({ count: size, seedMix: mix32(seed >>> 0) }),
    workgroups: Math.ceil(size / wg),
  });
  return out;
}
