import { broadcastStrides, type DType, type Shape, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';
import { collapse, countOf, stridedOffsets, stridedParams, stridedValues } from './strided';

export interface BroadcastMap {
  /** Pipeline key prefix naming the op (dtypes and rank are appended). */
  readonly key: string;
  /** Inputs, bound in order and read in `expr` by name. */
  readonly inputs: readonly { readonly name: string; readonly info: TensorInfo }[];
  readonly outShape: Shape;
  readonly outDtype: DType;
  /** WGSL expression of the output element; input `n` is visible as `n` (its value). */
  readonly expr: string;
  /** WGSL functions `expr` calls. */
  readonly helpers?: string;
}

/**
 * An elementwise kernel over inputs broadcast to `outShape` (stride 0 on broadcast axes),
 * one thread per output element; the iteration space is collapsed first.
 */
export function broadcastMap(rt: GpuRuntime, map: BroadcastMap): GpuStorage {
  const names = map.inputs.map((i) => `${i.name}_buf`);
  const layout = collapse(
    map.outShape,
    map.inputs.map((i) => broadcastStrides(i.info.shape, map.outShape)),
  );
  const buffers = map.inputs.map((i) => rt.storage(i.info.id));
  const count = countOf(layout);
  const out = rt.alloc(count, map.outDtype);
  const rank = layout.shape.length;
  const params = stridedParams(rank, names);
  const wg = rt.limits.workgroupSize;
  const types = map.inputs.map((i) => wgslType(i.info.dtype));
  const outType = wgslType(map.outDtype);
  const program = makeProgram(
    `${map.key}:${types.join(',')}:${outType}:${rank}:${wg}`,
    names.map((name, i) => ({ name, type: types[i] })),
    [{ name: 'out', type: outType }],
    params,
    () => `${map.helpers ?? ''}
${entryPoint(wg)}
  let idx = gid * ${wg}u + lid;
  if (idx >= p.count) { return; }
${stridedOffsets(rank, names)}
${map.inputs.map((i, k) => `  let ${i.name} = ${names[k]}[off_${names[k]}];`).join('\n')}
  out[idx] = ${map.expr};
}`,
  );
  rt.launch({
    program,
    inputs: buffers,
    outputs: [out],
    params: params.pack(stridedValues(layout, names)),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
