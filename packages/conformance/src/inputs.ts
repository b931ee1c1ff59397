import {
  type Backend,
  type InputSpec,
  normalAt,
  packHalves,
  sizeOf,
  type Tensor,
  tensor,
  uniformAt,
} from '@loom/tensor';

export type { Distribution, InputSpec } from '@loom/tensor';

/**
 * uniformAt, with 48 random bits instead of 24 when `span` exceeds 2^24, so that ranges as wide as a whole i32 word
 * (packed quantized codes) get every bit random; narrower ranges draw exactly the values they always did.
 */
function fineUniformAt(seed: number, i: number, span: number): number {
  const coarse = uniformAt(seed, i);
  if (span < 2 ** 24) return coarse;
  return coarse + (uniformAt(seed ^ 0x5bd1e995, i) - 0.5) / 2 ** 24;
}

/** Seeded host values for an input; the same seed gives the same values everywhere. */
export function hostValues(spec: InputSpec, seed: number): Float32Array | Int32Array {
  const n = sizeOf(spec.shape);
  const dist = spec.dist ?? { kind: 'normal' };
  if (dist.kind === 'halves') {
    const values = Float32Array.from({ length: 2 * n }, (_, i) => normalAt(seed, i) * dist.scale);
    return packHalves(dist.type, values);
  }
  const dtype = spec.dtype ?? (dist.kind === 'ints' ? 'i32' : 'f32');
  const out = dtype === 'f32' ? new Float32Array(n) : new Int32Array(n);
  for (let i = 0; i < n; i++) {
    switch (dist.kind) {
      case 'normal':
        out[i] = normalAt(seed, i) * (dist.scale ?? 1);
        break;
      case 'positive':
        out[i] = 0.1 + 2 * uniformAt(seed, i);
        break;
      case 'uniform':
        out[i] = dist.low + (dist.high - dist.low) * uniformAt(seed, i);
        break;
      case 'ints':
        out[i] =
          dist.low + Math.floor((dist.high - dist.low + 1) * fineUniformAt(seed, i, dist.high - dist.low));
        break;
    }
  }
  return out;
}

/** Uploads the inputs of a case to `backend`. */
export function makeInputs(backend: Backend, specs: readonly InputSpec[], seed: number): Tensor[] {
  return specs.map((spec, i) => {
    const values = hostValues(spec, seed * 131 + i);
    return tensor(values, spec.shape, { backend, dtype: values instanceof Int32Array ? 'i32' : 'f32' });
  });
}
