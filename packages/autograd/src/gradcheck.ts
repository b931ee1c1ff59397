import { scope, type Tensor, tensor } from '@loom/tensor';
import { valueAndGrad } from './value-and-grad';

export interface GradcheckOptions {
  /** Step of the central difference. */
  readonly eps?: number;
  readonly atol?: number;
  readonly rtol?: number;
}

export interface GradcheckResult {
  readonly ok: boolean;
  /** The worst element, described for a failure message. */
  readonly message: string;
  /** Number of elements compared. */
  readonly checked: number;
}

function evaluate(fn: (inputs: Tensor[]) => Tensor, inputs: Tensor[]): Promise<number> {
  const out = scope(() => fn(inputs));
  return out.item().finally(() => out.dispose());
}

/**
 * Compares the gradient autograd computes for a scalar `fn` with central finite differences
 * (f(x + eps) - f(x - eps)) / 2 eps for every element of every f32 input. Run it on a backend
 * that stores floats in float64 (CpuBackend with precision 'f64') for tight tolerances.
 */
export async function gradcheck(
  fn: (inputs: Tensor[]) => Tensor,
  inputs: Tensor[],
  options: GradcheckOptions = {},
): Promise<GradcheckResult> {
  const eps = options.eps ?? 1e-6;
  const atol = options.atol ?? 1e-6;
  const rtol = options.rtol ?? 1e-5;
  const differentiable = inputs.filter((t) => t.dtype === 'f32');
  const { value, grads } = valueAndGrad(() => fn(inputs), differentiable);
  value.dispose();
  const analytic = await Promise.all(grads.map((g) => g.data()));
  for (const g of grads) g.dispose();
  let worstExcess = Number.NEGATIVE_INFINITY;
  let bad = false;
  let message = 'all gradients match';
  let checked = 0;
  for (const [k, input] of differentiable.entries()) {
    const base = await input.data();
    for (let j = 0; j < base.length; j++) {
      const at = async (delta: number): Promise<number> => {
        const values = base.slice();
        values[j] += delta;
        const moved = tensor(values, input.shape, { backend: input.backend });
        try {
          return await evaluate(
            fn,
            inputs.map((t) => (t === input ? moved : t)),
          );
        } finally {
          moved.dispose();
        }
      };
      const numeric = ((await at(eps)) - (await at(-eps))) / (2 * eps);
      const got = analytic[k][j];
      const excess = Math.abs(got - numeric) - (atol + rtol * Math.abs(numeric));
      checked++;
      if (!(excess <= 0)) bad = true;
      if (!(excess <= worstExcess)) {
        worstExcess = excess;
        message = `input ${inputs.indexOf(input)} element ${j}: autograd ${got}, finite difference ${numeric} (atol ${atol}, rtol ${rtol})`;
      }
    }
  }
  return { ok: !bad, message, checked };
}
