import { type AttentionSpec, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('heads', 'u32')
  .scalar('steps', 'u32')
  .scalar('keys', 'u32')
  .scalar('kvHeads', 'u32')
  .scalar('offset', 'u32')
  .scalar('causal', 'u32')
  .scalar('scale', 'f32');

/** Threads per query row; keys are scored this many at a time. */
const THREADS = 64;
/** Stands in for -infinity so exp(m - mNew) stays well defined before the first key. */
const LOWEST = '-3.0e38';

/**
 * The kernel for heads of `headDim`; with `width` 4 the query sits in shared memory as vec4s and each
 * thread scores its key by vec4 loads (k bound as `array<vec4<f32>>`).
 */
function code(headDim: number, width: 1 | 4): string {
  const per = Math.ceil(headDim / THREADS);
  const lanes = headDim / width;
  const store = width === 4 ? 'query[d / 4u][d % 4u]' : 'query[d]';
  const score =
    width === 4
      ? `let kb = (kvBase + s * kvStride) / 4u;
      for (var d = 0u; d < ${lanes}u; d++) { qk += dot(query[d], k[kb + d]); }`
      : `let kb = kvBase + s * kvStride;
      for (var d = 0u; d < ${headDim}u; d++) { qk += query[d] * k[kb + d]; }`;
  return `
var<workgroup> query: array<${width === 4 ? 'vec4<f32>' : 'f32'}, ${lanes}>;
var<workgroup> weights: array<f32, ${THREADS}>;
${workgroupReduce('max_all', 'f32', THREADS, 'max(a, b)')}
${workgroupReduce('sum_all', 'f32', THREADS, 'a + b')}
${entryPoint(THREADS)}
  if (gid >= p.count) { return; }
  let h = gid % p.heads;
  let t = (gid / p.heads) % p.steps;
  let b = gid / p.heads / p.steps;
  let kvHead = h / (p.heads / p.kvHeads);
  let qBase = gid * ${headDim}u;
  for (var d = lid; d < ${headDim}u; d += ${THREADS}u) { ${store} = q[qBase + d]; }
  workgroupBarrier();
  var visible = p.keys;
  if (p.causal != 0u) { visible = min(p.keys, p.offset + t + 1u); }
  let kvStride = p.kvHeads * ${headDim}u;
  let kvBase = b * p.keys * kvStride + kvHead * ${headDim}u;
  var m = ${LOWEST};
  var l = 0.0;
  var acc: array<f32, ${per}>;
  for (var start = 0u; start < visible; start += ${THREADS}u) {
    let s = start + lid;
    var score = ${LOWEST};
    if (s < visible) {
      var qk = 0.0;
      ${score}
      score = qk * p.scale;
    }
    let mNew = max(m, max_all(score, lid));
    let correction = exp(m - mNew);
    var e = 0.0;
    if (s < visible) { e = exp(score - mNew); }
    weights[lid] = e;
    l = l * correction + sum_all(e, lid);
    let n = min(${THREADS}u, visible - start);
    for (var r = 0u; r < ${per}u; r++) {
      let d = lid + r * ${THREADS}u;
      if (d < ${headDim}u) {
        var a = acc[r] * correction;
        for (var j = 0u; j < n; j++) { a += weights[j] * v[kvBase + (start + j) * kvStride + d]; }
        acc[r] = a;
      }
    }
    m = mNew;
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var r = 0u; r < ${per}u; r++) {
    let d = lid + r * ${THREADS}u;
    if (d < ${headDim}u) { out[qBase + d] = acc[r] * inv; }
  }
}`;
}

/** Keys and values one query row reads, summed over the `steps` rows of one (batch, head). */
function visibleKeys(steps: number, keys: number, offset: number, causal: boolean): number {
  if (!causal) return steps * keys;
  let total = 0;
  for (let t = 0; t < steps; t++) total += Math.min(keys, offset + t + 1);
  return total;
}

/**
 * Scaled dot-product attention with one workgroup per (batch, step, head) query row and an
 * online softmax over key chunks of 64: q [B, T, H, hd], k and v [B, S, Hkv, hd], query head h
 * reads kv head floor(h / (H / Hkv)); with `causal`, query t sees keys s <= offset + t.
 */
export function attention(
  rt: GpuRuntime,
  q: TensorInfo,
  k: TensorInfo,
  v: TensorInfo,
  spec: AttentionSpec,
): GpuStorage {
  const [, steps, heads, headDim] = q.shape;
  const [, keys, kvHeads] = k.shape;
  const size = sizeOf(q.shape);
  const out = rt.alloc(size, 'f32');
  if (size === 0) return out;
  const shared = 4 * (headDim + 3 * THREADS);
  if (shared > rt.limits.maxWorkgroupStorageSize) {
    throw new Error(
      `webgpu: attention with head size ${headDim} needs ${shared} bytes of workgroup memory, ` +
        `this device allows ${rt.limits.maxWorkgroupStorageSize}; use smaller heads`,
    );
  }
  const width = headDim % 4 === 0 ? 4 : 1;
  const program = makeProgram(
    `attention:${headDim}:${width}`,
    [
      { name: 'q', type: 'f32' },
      { name: 'k', type: width === 4 ? 'vec4<f32>' : 'f32' },
      { name: 'v', type: 'f32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => code(headDim, width),
  );
  const count = size / headDim;
  const offset = spec.causal ? spec.offset : 0;
  rt.launch({
    program,
    inputs: [rt.storage(q.id), rt.storage(k.id), rt.storage(v.id)],
    outputs: [out],
    params: params.pack({
      count,
      heads,
      steps,
      keys,
      kvHeads,
      offset,
      causal: spec.causal ? 1 : 0,
      scale: spec.scale,
    }),
    workgroups: count,
    readBytes: 4 * headDim * (count + 2 * (count / steps) * visibleKeys(steps, keys, offset, spec.causal)),
  });
  return out;
}
