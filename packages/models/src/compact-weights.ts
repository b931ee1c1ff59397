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
