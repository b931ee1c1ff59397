import { type AdamWSpec, type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('beta1', 'f32')
  .scalar('gradBeta1', 'f32')
  .scalar('beta2', 'f32')
  .scalar('gradBeta2', 'f32')
  .scalar('step', 'f32')
  .scalar('rootScale', 'f32')
  .scalar('eps', 'f32')
  .scalar('decay', 'f32');

/**
 * One AdamW update in place, one thread per element, its constants in the uniform block: the composite's ten
 * dispatches and six uploaded scalars a parameter become one dispatch. The arithmetic is the composite's, in its
 * order: m = b1 m + g ((1-b1) s); v = b2 v + g² ((1-b2) s²); p = p (1 - lr wd) - m (lr/c1) / (sqrt(v / c2) + eps).
 */
function adamw(
  rt: GpuRuntime,
  param: TensorInfo,
  grad: TensorInfo,
  m: TensorInfo,
  v: TensorInfo,
  spec: AdamWSpec,
): void {
  const count = sizeOf(param.shape);
  if (count === 0) return;
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `adamw:${wg}`,
    [{ name: 'grad', type: 'f32' }],
    [
      { name: 'param', type: 'f32' },
      { name: 'm', type: 'f32' },
      { name: 'v', type: 'f32' },
    ],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  let g = grad[i];
  let m1 = m[i] * p.beta1 + g * p.gradBeta1;
  let v1 = v[i] * p.beta2 + (g * g) * p.gradBeta2;
  m[i] = m1;
  v[i] = v1;
  param[i] = param[i] * p.decay - (m1 * p.step) / (sqrt(v1 * p.rootScale) + p.eps);
}`,
  );
  const scale = spec.gradScale ?? 1;
  rt.launch({
    program,
    inputs: [rt.storage(grad.id)],
    outputs: [rt.storage(param.id), rt.storage(m.id), rt.storage(v.id)],
    params: params.pack({
      count,
      beta1: spec.beta1,
      gradBeta1: (1 - spec.beta1) * scale,
      beta2: spec.beta2,
      gradBeta2: (1 - spec.beta2) * scale * scale,
      step: spec.lr / spec.c1,
      rootScale: 1 / spec.c2,
      eps: spec.eps,
      decay: spec.weightDecay > 0 ? 1 - spec.lr * spec.weightDecay : 1,
    }),
    workgroups: Math.ceil(count / wg),
  });
}

/** AdamW (`adamw` above). */
export function adamwKernels(rt: GpuRuntime): Pick<FusedKernels, 'adamw'> {
  return { adamw: (param, grad, m, v, spec) => adamw(rt, param, grad, m, v, spec) };
}
