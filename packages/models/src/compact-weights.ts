import type { NamedQuantizedTensor } from './gguf/quantized';
import { isLinearWeight } from './gguf/quantized';
import type { NamedHalfTensor } from './half-linears';
import type { TensorSpec } from './validate';

/** The weights a file loaded with `weights: 'quantized'` keeps as quantized blocks or 16-bit halves. */
export interface KeptWeights {
  readonly quantized?: readonly NamedQuantizedTensor[];
  readonly halves?: readonly NamedHalfTensor[];
}

/**
 * The names and shapes of the linear weights held in a compact form (see validateTensors' `compact`). A tied
 * embedding's blocks are not among them: the lookups read its float32 values, which are kept too.
 */
export function compactWeights({ quantized = [], halves = [] }: KeptWeights): TensorSpec[] {
  return [...quantized.filter((q) => isLinearWeight(q.name)), ...halves].map(({ name, shape }) => ({
    name,
    shape: [...shape],
  }));
}

/**
 * Throws, naming the file, the tensor and the first bad index, when a kept weight's scales (quantized blocks) or
 * values (16-bit halves) hold NaN or ±Infinity: the check `checkFiniteWeights` makes on float32 values, for weights
 * that have none (a block's values are finite exactly when its scales are, its codes being integers).
 */
export function checkFiniteKept({ quantized = [], halves = [] }: KeptWeights, source: string): void {
  for (const { name, scales } of quantized) {
    const at = scales.findIndex((value) => value - value !== 0);
    if (at >= 0) throw corrupt(source, name, `scale ${scales[at]} at index ${at} of ${scales.length}`);
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
          `${type} value 0x${bits.toString(16)} at index ${i} of ${2 * packed.length}`,
        );
      }
    }
  }
}

function corrupt(source: string, name: string, what: string): Error {
  return new Error(
    `${source}: tensor "${name}" holds a non-finite ${what} — the weights are corrupt (a diverged training run or a damaged file); use another checkpoint`,
  );
}
