import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { makeProgram } from './program';

const params = new ParamLayout()
  .scalar('m', 'u32')
  .scalar('n', 'u32')
  .scalar('k', 'u32')
  .scalar('aStride', 'u32')
  .scalar('bStride', 'u32')
  .scalar('batchOffset', 'u32');

/** Each thread computes a PER x PER block of outputs. */
const PER = 4;
/** Depth of the k slice held in workgroup memory. */
const TILE_K = 16;

/** Threads per side of a workgroup: 16 (64 x 64 tiles) where 256 threads fit, else 8 (32 x 32 tiles). */
function threadsPerSide(workgroupSize: number): number {
  return workgroupSize >= 256 ? 16 : 8;
}

function tiledCode(side: number, transA: boolean, transB: boolean, bias: boolean): string {
  const threads = side * side;
  const tile = side * PER;
  const loadA = transA
    ? `let i = e % ${tile}u; let kk = e / ${tile}u; let src = aBase + (k0 + kk) * p.m + row0 + i;`
    : `let kk = e % ${TILE_K}u; let i = e / ${TILE_K}u; let src = aBase + (row0 + i) * p.k + k0 + kk;`;
  const loadB = transB
    ? `let kk = e % ${TILE_K}u; let j = e / ${TILE_K}u; let src = bBase + (col0 + j) * p.k + k0 + kk;`
    : `let j = e % ${tile}u; let kk = e / ${tile}u; let src = bBase + (k0 + kk) * p.n + col0 + j;`;
  const lanes = ['x', 'y', 'z', 'w'];
  return `
var<workgroup> tileA: array<vec4<f32>, ${TILE_K * side}>;
var<workgroup> tileB: array<vec4<f32>, ${TILE_K * side}>;

@compute @workgroup_size(${threads})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let batch = wid.z + p.batchOffset;
  let row0 = wid.y * ${tile}u;
  let col0 = wid.x * ${tile}u;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride;
  let tx = lid % ${side}u;
  let ty = lid / ${side}u;
${lanes.map((_, r) => `  var acc${r} = vec4<f32>(0.0);`).join('\n')}
  for (var k0 = 0u; k0 < p.k; k0 += ${TILE_K}u) {
    for (var e = lid; e < ${TILE_K * tile}u; e += ${threads}u) {
      ${loadA}
      var v = 0.0;
      if (row0 + i < p.m && k0 + kk < p.k) { v = a[src]; }
      tileA[kk * ${side}u + i / ${PER}u][i % ${PER}u] = v;
    }
    for (var e = lid; e < ${TILE_K * tile}u; e += ${threads}u) {
      ${loadB}
      var v = 0.0;
      if (col0 + j < p.n && k0 + kk < p.k) { v = b[src]; }
      tileB[kk * ${side}u + j / ${PER}u][j % ${PER}u] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${TILE_K}u; kk++) {
      let av = tileA[kk * ${side}u + ty];
      let bv = tileB[kk * ${side}u + tx];
${lanes.map((lane, r) => `      acc${r} += bv * av.${lane};`).join('\n')}
    }
    workgroupBarrier();
  }
  let outBase = batch * p.m * p.n;
  let j = col0 + tx * ${PER}u;
${lanes
  .map(
    (_, r) => `  if (row0 + ty * ${PER}u + ${r}u < p.m) {
    let rowBase = outBase + (row0 + ty * ${PER}u + ${r}u) * p.n;
    for (var c = 0u; c < ${PER}u; c++) {
      if (j + c < p.n) { out[rowBase + j + c] = acc${r}[c]${bias ? ' + bias[j + c]' : ''}; }
    }
  }`,
  )
  .join('\n')}
}`;
}

/**
 * Batched matrix product by tiles held in workgroup memory: each workgroup computes a square
 * output tile, each thread a 4 x 4 block of it, stepping through k in slices of 16; plus `bias` [n] on every row
 * where given (a linear layer's, added as the tile is written).
 */
export function tiledMatmul(
  rt: GpuRuntime,
  a: TensorInfo,
  b: TensorInfo,
  spec: MatmulSpec,
  bias?: GpuStorage,
): GpuStorage {
  const inputs = [rt.storage(a.id), rt.storage(b.id), ...(bias ? [bias] : [])];
  const out = rt.alloc(spec.batch * spec.m * spec.n, 'f32');
  const side = threadsPerSide(rt.limits.workgroupSize);
  const tile = side * PER;
  const sharedBytes = 2 * TILE_K * tile * 4;
  if (sharedBytes > rt.limits.maxWorkgroupStorageSize) {
    throw new Error(
      `webgpu: matmul needs ${sharedBytes} bytes of workgroup memory, this device allows ${rt.limits.maxWorkgroupStorageSize}`,
    );
  }
  const program = makeProgram(
    `matmul:${spec.transA}:${spec.transB}:${side}${bias ? ':bias' : ''}`,
    [
      { name: 'a', type: 'f32' },
      { name: 'b', type: 'f32' },
      ...(bias ? [{ name: 'bias', type: 'f32' }] : []),
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => tiledCode(side, spec.transA, spec.transB, bias !== undefined),
  );
  const max = rt.limits.maxWorkgroupsPerDimension;
  const columns = Math.ceil(spec.n / tile);
  const rows = Math.ceil(spec.m / tile);
  if (columns > max || rows > max) {
    throw new Error(
      `webgpu: matmul output [${spec.m}, ${spec.n}] needs more than ${max} tiles along one side`,
    );
  }
  for (let batchOffset = 0; batchOffset < spec.batch; batchOffset += max) {
    const depth = Math.min(max, spec.batch - batchOffset);
    rt.launch({
      program,
      inputs,
      outputs: [out],
      params: params.pack({
        m: spec.m,
        n: spec.n,
        k: spec.k,
        aStride: spec.aBatchStride,
        bStride: spec.bBatchStride,
        batchOffset,
      }),
      workgroups: [columns, rows, depth],
    });
  }
  return out;
}
