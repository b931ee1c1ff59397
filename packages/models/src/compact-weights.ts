import type { NamedQuantizedTensor } from './gguf/quantized';
import type { NamedHalfTensor } from './half-linears';
import type { TensorSpec } from './validate';

/** The weights a file loaded with `weights: 'quantized'` keeps as quantized blocks or 16-bit halves. */
export interface KeptWeights {
  readonly quantized?: readonly NamedQuantizedTensor[];
  readonly halves?: readonly NamedHalfTensor[];
}

/** The names and shapes of the weights held in a compact form, without float32 values (see validateTensors' `compact`). */
export function compactWeights({ quantized = [], halves = [] }: KeptWeights): TensorSpec[] {
  return [...quantized, ...halves].map(({ name, shape }) => ({
    name,
    shape: [...shape],
  }));
}
