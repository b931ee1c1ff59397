import { Rng } from '../src/index';

/** A logits row from plain numbers. */
export function row(...values: number[]): Float32Array {
  return Float32Array.from(values);
}

/** Logits whose softmax is `probs` (up to float32 rounding). */
export function logitsOf(...probs: number[]): Float32Array {
  return Float32Array.from(probs, Math.log);
}

/** A random logits row of `size` entries, roughly normal around 0 with spread `scale`. */
export function randomLogits(seed: number, size: number, scale = 3): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from(
    { length: size },
    () => (rng.nextFloat() + rng.nextFloat() + rng.nextFloat() - 1.5) * scale,
  );
}

/** The ids that are still possible (finite logits). */
export function kept(logits: Float32Array): number[] {
  const ids: number[] = [];
  logits.forEach((value, i) => {
    if (value !== Number.NEGATIVE_INFINITY) ids.push(i);
  });
  return ids;
}
