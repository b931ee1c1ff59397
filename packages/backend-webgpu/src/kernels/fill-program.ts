import type { DType } from '@loom/tensor';
import type { KernelProgram } from '../kernel-program';
import { ParamLayout } from '../param-layout';
import { entryPoint, makeProgram, wgslType } from './program';

const layouts = {
  f32: new ParamLayout().scalar('count', 'u32').scalar('value', 'f32'),
  i32: new ParamLayout().scalar('count', 'u32').scalar('value', 'i32'),
};

/**
 * The kernel that sets `count` elements of its output to `value` (i32 values truncated toward zero), with its packed
 * parameters and workgroup count: what `fill` launches, and the runtime for zeros at their first use.
 */
export function fillLaunch(
  dtype: DType,
  count: number,
  value: number,
  wg: number,
): { program: KernelProgram; params: ArrayBuffer; workgroups: number } {
  const type = wgslType(dtype);
  const params = layouts[dtype];
  const program = makeProgram(
    `fill:${type}:${wg}`,
    [],
    [{ name: 'out', type }],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = p.value;
}`,
  );
  const stored = dtype === 'f32' ? value : Math.trunc(value) | 0;
  return { program, params: params.pack({ count, value: stored }), workgroups: Math.ceil(count / wg) };
}
