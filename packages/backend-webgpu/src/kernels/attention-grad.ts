import { type AttentionSpec, type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuRuntime } from '../runtime';
import { attentionParams, LOWEST, packAttention, THREADS, VISIBLE_KEYS } from './attention';
import { entryPoint, makeProgram } from './program';
import { workgroupReduce } from './workgroup-reduce';

/** WGSL that names query row `row`'s batch entry, step and head, as the forward kernel numbers its rows. */
const ROW = `fn row_b(row: u32) -> u32 { return row / p.heads / p.steps; }
fn row_t(row: u32) -> u32 { return (row / p.heads) % p.steps; }
fn row_h(row: u32) -> u32 { return row % p.heads; }`;

/**
 * Query rows, one workgroup each (its query and output gradient g in shared memory): the softmax's max m and sum l
 * over the visible keys (online, as the forward), then D = Σ_s p_s dp_s with p_s = exp(score_s - m) / l and
 * dp_s = g · v_s, then dq += scale Σ_s p_s (dp_s - D) k_s. Leaves (m, l, D) in stats for the key pass.
 */
function queryCode(headDim: number): string {
  const per = Math.ceil(headDim / THREADS);
  return `
var<workgroup> query: array<f32, ${headDim}>;
var<workgroup> gradRow: array<f32, ${headDim}>;
var<workgroup> weights: array<f32, ${THREADS}>;
${workgroupReduce('max_all', 'f32', THREADS, 'max(a, b)')}
${workgroupReduce('sum_all', 'f32', THREADS, 'a + b')}
${VISIBLE_KEYS}
${ROW}
${entryPoint(THREADS)}
  if (gid >= p.count) { return; }
  let b = row_b(gid);
  let kvHead = row_h(gid) / (p.heads / p.kvHeads);
  let qBase = gid * ${headDim}u;
  for (var d = lid; d < ${headDim}u; d += ${THREADS}u) {
    query[d] = q[qBase + d];
    gradRow[d] = grad[qBase + d];
  }
  workgroupBarrier();
  let range = visible_keys(b, row_t(gid));
  let kvStride = p.kvHeads * ${headDim}u;
  let kvBase = b * p.keys * kvStride + kvHead * ${headDim}u;
  var m = ${LOWEST};
  var l = 0.0;
  for (var start = range.x; start < range.y; start += ${THREADS}u) {
    let s = start + lid;
    var score = ${LOWEST};
    if (s < range.y) {
      var qk = 0.0;
      for (var d = 0u; d < ${headDim}u; d++) { qk += query[d] * k[kvBase + s * kvStride + d]; }
      score = qk * p.scale;
    }
    let mNew = max(m, max_all(score, lid));
    var e = 0.0;
    if (s < range.y) { e = exp(score - mNew); }
    l = l * exp(m - mNew) + sum_all(e, lid);
    m = mNew;
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  var dSum = 0.0;
  for (var start = range.x; start < range.y; start += ${THREADS}u) {
    let s = start + lid;
    var pd = 0.0;
    if (s < range.y) {
      var qk = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < ${headDim}u; d++) {
        qk += query[d] * k[kvBase + s * kvStride + d];
        dp += gradRow[d] * v[kvBase + s * kvStride + d];
      }
      pd = exp(qk * p.scale - m) * inv * dp;
    }
    dSum += sum_all(pd, lid);
  }
  var acc: array<f32, ${per}>;
  for (var start = range.x; start < range.y; start += ${THREADS}u) {
    let s = start + lid;
    var ds = 0.0;
    if (s < range.y) {
      var qk = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < ${headDim}u; d++) {
        qk += query[d] * k[kvBase + s * kvStride + d];
        dp += gradRow[d] * v[kvBase + s * kvStride + d];
      }
      ds = exp(qk * p.scale - m) * inv * (dp - dSum);
    }
    workgroupBarrier();
    weights[lid] = ds;
    workgroupBarrier();
    let n = min(${THREADS}u, range.y - start);
    for (var r = 0u; r < ${per}u; r++) {
      let d = lid + r * ${THREADS}u;
      if (d < ${headDim}u) {
        var a = acc[r];
        for (var j = 0u; j < n; j++) { a += weights[j] * k[kvBase + (start + j) * kvStride + d]; }
        acc[r] = a;
      }
    }
  }
  for (var r = 0u; r < ${per}u; r++) {
    let d = lid + r * ${THREADS}u;
    if (d < ${headDim}u) { dq[qBase + d] += p.scale * acc[r]; }
  }
  if (lid == 0u) { stats[gid] = vec4<f32>(m, inv, dSum, 0.0); }
}`;
}

/**
 * Key rows (b, s, kv head), one workgroup each (its key and value in shared memory): over every query row of the
 * kv head's query heads that sees key s, p = exp(score - m) · (1/l) and ds = p (g · v_s - D) from the query pass's
 * stats, then dv_s += Σ p g and dk_s += scale Σ ds q. Each key row is written by its own workgroup: no atomics.
 */
function keyCode(headDim: number): string {
  const per = Math.ceil(headDim / THREADS);
  return `
var<workgroup> keyRow: array<f32, ${headDim}>;
var<workgroup> valueRow: array<f32, ${headDim}>;
var<workgroup> probs: array<f32, ${THREADS}>;
var<workgroup> slopes: array<f32, ${THREADS}>;
var<workgroup> rowsOf: array<u32, ${THREADS}>;
${VISIBLE_KEYS}
${entryPoint(THREADS)}
  let kvRows = p.count;
  if (gid >= kvRows) { return; }
  let kvHead = gid % p.kvHeads;
  let s = (gid / p.kvHeads) % p.keys;
  let b = gid / p.kvHeads / p.keys;
  let kvBase = gid * ${headDim}u;
  for (var d = lid; d < ${headDim}u; d += ${THREADS}u) {
    keyRow[d] = k[kvBase + d];
    valueRow[d] = v[kvBase + d];
  }
  let group = p.heads / p.kvHeads;
  let queries = p.steps * group;
  var dkAcc: array<f32, ${per}>;
  var dvAcc: array<f32, ${per}>;
  for (var start = 0u; start < queries; start += ${THREADS}u) {
    workgroupBarrier();
    let local = start + lid;
    var prob = 0.0;
    var ds = 0.0;
    var row = 0u;
    if (local < queries) {
      let t = local / group;
      let h = kvHead * group + local % group;
      row = (b * p.steps + t) * p.heads + h;
      let range = visible_keys(b, t);
      let st = stats[row];
      if (s >= range.x && s < range.y && st.y > 0.0) {
        let qBase = row * ${headDim}u;
        var qk = 0.0;
        var dp = 0.0;
        for (var d = 0u; d < ${headDim}u; d++) {
          qk += q[qBase + d] * keyRow[d];
          dp += grad[qBase + d] * valueRow[d];
        }
        prob = exp(qk * p.scale - st.x) * st.y;
        ds = prob * (dp - st.z);
      }
    }
    probs[lid] = prob;
    slopes[lid] = ds;
    rowsOf[lid] = row;
    workgroupBarrier();
    let n = min(${THREADS}u, queries - start);
    for (var r = 0u; r < ${per}u; r++) {
      let d = lid + r * ${THREADS}u;
      if (d < ${headDim}u) {
        var dkv = dkAcc[r];
        var dvv = dvAcc[r];
        for (var j = 0u; j < n; j++) {
          let qBase = rowsOf[j] * ${headDim}u;
          dkv += slopes[j] * q[qBase + d];
          dvv += probs[j] * grad[qBase + d];
        }
        dkAcc[r] = dkv;
        dvAcc[r] = dvv;
      }
    }
  }
  for (var r = 0u; r < ${per}u; r++) {
    let d = lid + r * ${THREADS}u;
    if (d < ${headDim}u) {
      dk[kvBase + d] += p.scale * dkAcc[r];
      dv[kvBase + d] += dvAcc[r];
    }
  }
}`;
}

/**
 * attention's backward pass in two dispatches, adding into dq, dk and dv (q [B, T, H, hd], k and v [B, S, Hkv, hd]):
 * a query pass (dq, and each row's softmax statistics) and a key pass (dk and dv), where the composite takes some
 * twenty (the weights again, three products, the softmax's backward, permutes, adds and copies). Neither holds the
 * [B, H, T, S] weights: each recomputes the scores it needs.
 */
function attentionGrad(
  rt: GpuRuntime,
  q: TensorInfo,
  k: TensorInfo,
  v: TensorInfo,
  grad: TensorInfo,
  dq: TensorInfo,
  dk: TensorInfo,
  dv: TensorInfo,
  spec: AttentionSpec,
): void {
  const headDim = q.shape[3];
  const queryRows = headDim === 0 ? 0 : sizeOf(q.shape) / headDim;
  const keyRows = headDim === 0 ? 0 : sizeOf(k.shape) / headDim;
  if (queryRows === 0 || keyRows === 0) return;
  const stats = rt.alloc(4 * queryRows, 'f32'); // [rows, 4]: m, 1/l, D
  const padded = spec.keyLengths.length > 0;
  // Without padding nothing reads the lengths, so q stands in for them and no upload is made.
  const keyLengths = padded ? rt.upload(Int32Array.from(spec.keyLengths)) : rt.storage(q.id);
  const inputs = [rt.storage(q.id), rt.storage(k.id), rt.storage(v.id), rt.storage(grad.id), keyLengths];
  const bound = [
    { name: 'q', type: 'f32' },
    { name: 'k', type: 'f32' },
    { name: 'v', type: 'f32' },
    { name: 'grad', type: 'f32' },
    { name: 'keyLengths', type: 'u32' },
  ];
  rt.launch({
    program: makeProgram(
      `attentionGrad:query:${headDim}`,
      bound,
      [
        { name: 'dq', type: 'f32' },
        { name: 'stats', type: 'vec4<f32>' },
      ],
      attentionParams,
      () => queryCode(headDim),
    ),
    inputs,
    outputs: [rt.storage(dq.id), stats],
    params: packAttention(queryRows, q.shape, k.shape, spec),
    workgroups: queryRows,
  });
  rt.launch({
    program: makeProgram(
      `attentionGrad:key:${headDim}`,
      [...bound, { name: 'stats', type: 'vec4<f32>' }],
      [
        { name: 'dk', type: 'f32' },
        { name: 'dv', type: 'f32' },
      ],
      attentionParams,
      () => keyCode(headDim),
    ),
    inputs: [...inputs, stats],
    outputs: [rt.storage(dk.id), rt.storage(dv.id)],
    params: packAttention(keyRows, q.shape, k.shape, spec),
    workgroups: keyRows,
  });
  rt.release(stats);
  if (padded) rt.release(keyLengths);
}

/** Attention's backward pass (`attentionGrad` above). */
export function attentionGradKernels(rt: GpuRuntime): Pick<FusedKernels, 'attentionGrad'> {
  return {
    attentionGrad: (q, k, v, grad, dq, dk, dv, spec) => attentionGrad(rt, q, k, v, grad, dq, dk, dv, spec),
  };
}
