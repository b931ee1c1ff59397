import { Embedding, Linear, TransformerLM } from '@loom/nn';
import { compactWeights } from './compact-weights';
import type { ModelConfig } from './config';
import type { NamedQuantizedTensor } from './gguf/quantized';
import { type NamedHalfTensor, useHalfWeights } from './half-linears';
import { useQuantizedWeights } from './quantize-model';
import type { NamedTensor } from './tensor';
import { validateTensors } from './validate';

/** What `transformerFromTensors` needs: a config and its weights in Loom names and layouts. */
export interface ModelWeights {
  readonly config: ModelConfig;
  readonly tensors: readonly NamedTensor[];
  /**
   * Linear-layer and embedding weights to keep quantized (a GGUF file loaded with `weights: 'quantized'`), which
   * `tensors` need not hold: the model holds only the blocks.
   */
  readonly quantized?: readonly NamedQuantizedTensor[];
  /** Linear-layer and embedding weights to keep at 16 bits (a BF16 / F16 checkpoint loaded with `weights: 'quantized'`). */
  readonly halves?: readonly NamedHalfTensor[];
}

/**
 * Builds a `TransformerLM` on the current backend (`setBackend`) and copies the weights into it. The tensors are
 * validated against the config first, so a missing, extra or misshapen tensor is reported by name (`source` names
 * the weights in errors). Layers named in `quantized` or `halves` read those blocks in their products and lookups and keep no f32
 * weight (their parameters are left disposed: such a model is for inference, not training or saving). The model is
 * switched to evaluation mode; dispose it when done.
 */
export function transformerFromTensors(weights: ModelWeights, source = 'model'): TransformerLM {
  const tensors = validateTensors(weights.config, weights.tensors, source, compactWeights(weights));
  // Zeros, not the random initialisation: every weight is overwritten from the file right away (the CPU backend
  // allocates zeros at their first use, so a weight freed before it is loaded never takes memory).
  const model = new TransformerLM(weights.config, { init: 'zeros' });
  try {
    useQuantizedWeights(model, weights.quantized ?? [], source);
    useHalfWeights(model, weights.halves ?? [], source);
    // The compact layers' products and lookups read their blocks or halves: their f32 weights are freed unused.
    for (const m of model.modules()) {
      if ((m instanceof Linear || m instanceof Embedding) && m.quantized !== undefined) m.releaseWeight();
    }
    model.loadStateDict(new Map(tensors.map((t) => [t.name, t])));
  } catch (error) {
    model.dispose();
    throw error;
  }
  return model.eval();
}

/**
 * Reads a model's parameters back to the host as named float32 tensors in Loom's canonical order, ready for
 * `saveCheckpoint` or `serializeSafetensors` (and, through `toHfTensors`, for Hugging Face files).
 */
export async function tensorsFromTransformer(model: TransformerLM): Promise<NamedTensor[]> {
  const tensors: NamedTensor[] = [];
  for (const [name, param] of model.namedParameters()) {
    if (param.isDisposed) {
      throw new Error(
        `tensorsFromTransformer: parameter ${name} holds no float32 values: its layer reads quantized blocks only (a model loaded with weights: 'quantized'); load it with weights: 'f32' to save it`,
      );
    }
    if (param.dtype !== 'f32') {
      throw new Error(
        `tensorsFromTransformer: parameter ${name} is ${param.dtype}; checkpoints hold float32 weights`,
      );
    }
    tensors.push({ name, shape: [...param.shape], data: await param.float32Data() });
  }
  return validateTensors(model.config, tensors, 'tensorsFromTransformer');
}
