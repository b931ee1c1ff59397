import type { NamedTensor } from './tensor';

/**
 * Throws, naming the file, the tensor and the first bad index, when a weight holds NaN or
 * ±Infinity: such a model only ever prints garbage, so it is refused at load (one pass).
 */
export function checkFiniteWeights(tensors: readonly NamedTensor[], source: string): void {
  for (const { name, data } of tensors) {
    for (let i = 0; i < data.length; i++) {
      const value = data[i];
      if (value - value !== 0) {
        let count = 0;
        for (let j = i; j < data.length; j++) if (data[j] - data[j] !== 0) count++;
        throw new Error(
          `${source}: tensor "${name}" holds ${count} non-finite value(s), the first ${value} at index ${i} of ${data.length} — the weights are corrupt (a diverged training run or a damaged file); use another checkpoint`,
        );
      }
    }
  }
}
