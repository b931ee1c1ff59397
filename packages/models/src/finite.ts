import type { KeptWeights } from './compact-weights';
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
        throw corrupt(
          source,
          name,
          `${count} non-finite value(s), the first ${value} at index ${i} of ${data.length}`,
        );
      }
    }
  }
}

/**
 * Throws, naming the file, the tensor and the first bad index, when a kept weight's scales (quantized blocks) or
 * values (16-bit halves) hold NaN or ±Infinity: the check `checkFiniteWeights` makes on float32 values, for weights
 * that have none (a block's values are finite exactly when its scales are, its codes being integers).
 */
export function checkFiniteKept({ quantized = [], halves = [] }: KeptWeights, source: string): void {
  for (const { name, scales } of quantized) {
    const at = scales.findIndex((value) => value - value !== 0);
    if (at >= 0)
      throw corrupt(source, name, `a non-finite scale ${scales[at]} at index ${at} of ${scales.length}`);
  }
  for (const { name, type, packed } of halves) {
    // All exponent bits set: ±Infinity or NaN (BF16: 8 bits from bit 7; F16: 5 bits from bit 10).
    const exponent = type === 'bf16' ? 0x7f80 : 0x7c00;
    for (let i = 0; i < 2 * packed.length; i++) {
      const bits = (packed[i >> 1] >>> (16 * (i & 1))) & 0xffff;
      if ((bits & exponent) === exponent) {
        throw corrupt(
          source,
          name,
          `a non-finite ${type} value 0x${bits.toString(16)} at index ${i} of ${2 * packed.length}`,
        );
      }
    }
  }
}

/** The error for a tensor that holds `what`, a description of its first non-finite value. */
function corrupt(source: string, name: string, what: string): Error {
  return new Error(
    `${source}: tensor "${name}" holds ${what} — the weights are corrupt (a diverged training run or a damaged file); use another checkpoint`,
  );
}
