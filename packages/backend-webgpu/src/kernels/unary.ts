import { type DType, sizeOf, type TensorInfo, type UnaryOp } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { GELU, SIGMOID, TANH } from './math';
import { entryPoint, makeProgram, wgslType } from './program';

const params = new ParamLayout().scalar('count', 'u32');

/** WGSL expression of each op on `v`, with the helper functions it needs. */
function expression(op: UnaryOp, dtype: DType): { expr: string; helpers: string } {
  const plain = (expr: string) => ({ expr, helpers: '' });
  switch (op) {
    case 'neg':
      return plain('-v');
    case 'abs':
      return plain('abs(v)');
    case 'exp':
      return plain('exp(v)');
    case 'log':
      return plain('log(v)');
    case 'sqrt':
      return plain('sqrt(v)');
    case 'rsqrt':
      return plain('1.0 / sqrt(v)');
    case 'recip':
      return plain('1.0 / v');
    case 'tanh':
      return { expr: 'tanh_(v)', helpers: TANH };
    case 'sigmoid':
      return { expr: 'sigmoid_(v)', helpers: SIGMOID };
    case 'silu':
      return { expr: 'v * sigmoid_(v)', helpers: SIGMOID };
    case 'gelu':
      return { expr: 'gelu_(v)', helpers: GELU };
    case 'relu':
      return plain(dtype === 'f32' ? 'max(v, 0.0)' : 'max(v, 0)');
    case 'sin':
      return plain('sin(v)');
    case 'cos':
      return plain('cos(v)');
  }
}

/** Elementwise math on one tensor, one thread per element. */
export function unary(rt: GpuRuntime, op: UnaryOp, x: TensorInfo): GpuStorage {
  const input = rt.storage(x.id);
  const count = sizeOf(x.shape);
  const out = rt.alloc(count, x.dtype);
  const wg = rt.limits.workgroupSize;
  const type = wgslType(x.dtype);
  const { expr, helpers } = expression(op, x.dtype);
  const program = makeProgram(
    `unary:${op}:${type}:${wg}`,
    [{ name: 'x', type }],
    [{ name: 'out', type }],
    params,
    () => `${helpers}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  let v = x[i];
  out[i] = ${expr};
}`,
  );
  rt.launch({
    program,
    inputs: [input],
    outputs: [out],
    params: params.pack({ count }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
