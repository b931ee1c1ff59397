import { type AttentionSpec, type FusedKernels, sizeOf, type TensorInfo, visibleKeys } from '@loom/tensor';
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
  .scalar('mask', 'u32')
  .scalar('prefix', 'u32')
  .scalar('window', 'u32')
  .scalar('padded', 'u32')
  .scalar('scale', 'f32');

/** The mask kinds as the kernel's `mask` parameter numbers them. */
const MASK = { none: 0, causal: 1, prefix: 2 } as const;

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
  let position = p.offset + t;
  var visible = p.keys;
  if (p.padded != 0u) { visible = min(visible, keyLengths[b]); }
  if (p.mask == ${MASK.causal}u) { visible = min(visible, position + 1u); }
  if (p.mask == ${MASK.prefix}u) { visible = min(visible, max(position + 1u, p.prefix)); }
  var first = 0u;
  if (p.window != 0u && position + 1u > p.window) { first = position + 1u - p.window; }
  let kvStride = p.kvHeads * ${headDim}u;
  let kvBase = b * p.keys * kvStride + kvHead * ${headDim}u;
  var m = ${LOWEST};
  var l = 0.0;
  var acc: array<f32, ${per}>;
  for (var start = first; start < visible; start += ${THREADS}u) {
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

/** Keys and values the query rows of one head read, summed over batch rows and steps. */
function keysRead(spec: AttentionSpec, batch: number, steps: number, keys: number): number {
  let total = 0;
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < steps; t++) {
      const { start, end } = visibleKeys(spec, b, t, keys);
      total += Math.max(0, end - start);
    }
  }
  return total;
}

/**
 * Scaled dot-product attention with one workgroup per (batch, step, head) query row and an
 * online softmax over key chunks of 64: q [B, T, H, hd], k and v [B, S, Hkv, hd], query head h
 * reads kv head floor(h / (H / Hkv)); query t of row b sees one range of keys: from the window's first to
 * the end its mask and, with padding, `keyLengths[b]` (uploaded as a u32 buffer) allow.
 */
export function attention(
  rt: GpuRuntime,
  q: TensorInfo,
  k: TensorInfo,
  v: TensorInfo,
  spec: AttentionSpec,
): GpuStorage {
  const [batch, steps, heads, headDim] = q.shape;
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
      { name: 'keyLengths', type: 'u32' },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => code(headDim, width),
  );
  const count = size / headDim;
  const padded = spec.keyLengths.length > 0;
  // Without padding nothing reads the lengths, so q stands in for them and no upload is made.
  const keyLengths = padded ? rt.upload(Int32Array.from(spec.keyLengths)) : rt.storage(q.id);
  rt.launch({
    program,
    inputs: [rt.storage(q.id), rt.storage(k.id), rt.storage(v.id), keyLengths],
    outputs: [out],
    params: params.pack({
      count,
      heads,
      steps,
      keys,
      kvHeads,
      offset: spec.offset,
      mask: MASK[spec.mask.kind],
      prefix: spec.mask.kind === 'prefix' ? spec.mask.length : 0,
      window: spec.window,
      padded: padded ? 1 : 0,
      scale: spec.scale,
    }),
    workgroups: count,
    readBytes:
      4 * (headDim * (count + 2 * heads * keysRead(spec, batch, steps, keys)) + (padded ? batch : 0)),
  });
  if (padded) rt.release(keyLengths);
  return out;
}

/** Attention (`attention` above). */
export function attentionKernels(rt: GpuRuntime): Pick<FusedKernels, 'attention'> {
  return { attention: (q, k, v, spec) => attention(rt, q, k, v, spec) };
}
