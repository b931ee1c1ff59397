import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';
import { GELU, SIGMOID, TANH } from './math';
import { entryPoint, makeProgram } from './program';

const GELU_SLOPE = `${TANH}
fn gelu_slope_(x: f32) -> f32 {
  let c = 0.7978845608028654;
  let t = tanh_(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 0.134145 * x * x);
}
`;

const SQUARED_RELU = `
fn squared_relu_(x: f32) -> f32 {
  let r = max(x, 0.0);
  return r * r;
}`;

/**
 * `expr` of each element of `inputs` (of one shape, bound in order and read in `expr` under
 * their names) in a `broadcastMap` kernel keyed `key`, calling the WGSL functions `helpers`.
 */
function pointwise(
  rt: GpuRuntime,
  key: string,
  inputs: Readonly<Record<string, TensorInfo>>,
  expr: string,
  helpers: string,
): GpuStorage {
  const bound = Object.entries(inputs).map(([name, info]) => ({ name, info }));
  return broadcastMap(rt, {
    key,
    inputs: bound,
    outShape: bound[0].info.shape,
    outDtype: 'f32',
    expr,
    helpers,
  });
}

const softcapParams = new ParamLayout().scalar('count', 'u32').scalar('cap', 'f32');

/** cap · tanh(x / cap), elementwise, one thread per element. */
function softcap(rt: GpuRuntime, x: TensorInfo, cap: number): GpuStorage {
  const count = sizeOf(x.shape);
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `softcap:${wg}`,
    [{ name: 'x', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    softcapParams,
    () => `${TANH}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  out[i] = p.cap * tanh_(x[i] / p.cap);
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(x.id)],
    outputs: [out],
    params: softcapParams.pack({ count, cap }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}

const swigluGradParams = new ParamLayout().scalar('count', 'u32');

/**
 * SwiGLU's gate gradient grad · up · (s + gate · s · (1 - s)), one thread per element, with
 * s = sigmoid(gate) and 1 - s = sigmoid(-gate) (exact as s nears 1, and 1 where gate is so
 * negative that s is 0); the up gradient grad · silu(gate) is the swiglu kernel on (gate, grad).
 */
function swigluGrad(rt: GpuRuntime, gate: TensorInfo, up: TensorInfo, grad: TensorInfo): GpuStorage {
  const count = sizeOf(gate.shape);
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `swigluGrad:${wg}`,
    [
      { name: 'gate', type: 'f32' },
      { name: 'up', type: 'f32' },
      { name: 'grad', type: 'f32' },
    ],
    [{ name: 'out', type: 'f32' }],
    swigluGradParams,
    () => `${SIGMOID}
${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  let a = gate[i];
  let s = sigmoid_(a);
  out[i] = grad[i] * up[i] * (s + a * s * sigmoid_(-a));
}`,
  );
  rt.launch({
    program,
    inputs: [rt.storage(gate.id), rt.storage(up.id), rt.storage(grad.id)],
    outputs: [out],
    params: swigluGradParams.pack({ count }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}

/** The elementwise fused ops, one thread per element, each output shaped like its first input. */
export function pointwiseKernels(
  rt: GpuRuntime,
): Pick<FusedKernels, 'swiglu' | 'swigluGrad' | 'geglu' | 'geluGrad' | 'softcap' | 'squaredRelu'> {
  return {
    /** silu(gate) · up. */
    swiglu: (gate, up) => pointwise(rt, 'swiglu', { g: gate, u: up }, 'g * sigmoid_(g) * u', SIGMOID),
    swigluGrad: (gate, up, grad) => swigluGrad(rt, gate, up, grad),
    /** gelu(gate) · up, GELU in its tanh form. */
    geglu: (gate, up) => pointwise(rt, 'geglu', { g: gate, u: up }, 'gelu_(g) * u', GELU),
    /** grad · gelu'(x), GELU in its tanh form. */
    geluGrad: (x, grad) => pointwise(rt, 'geluGrad', { x, g: grad }, 'g * gelu_slope_(x)', GELU_SLOPE),
    softcap: (x, cap) => softcap(rt, x, cap),
    /** max(x, 0)². */
    squaredRelu: (x) => pointwise(rt, 'squaredRelu', { x }, 'squared_relu_(x)', SQUARED_RELU),
  };
}
