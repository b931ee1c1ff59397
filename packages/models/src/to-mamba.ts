import { type MambaConfig, MambaLM } from '@loom/nn';
import type { NamedTensor } from './tensor';
import { validateTensors } from './validate';

/** What `mambaFromTensors` needs: a Mamba config and its weights under MambaLM's names. */
export interface MambaWeights {
  readonly config: MambaConfig;
  readonly tensors: readonly NamedTensor[];
}

/**
 * Builds a `MambaLM` on the current backend (`setBackend`) and copies the weights into it, after validating them
 * against the config (a missing, extra or misshapen tensor is reported by name; `source` names the weights in
 * errors). The model is switched to evaluation mode; dispose it when done.
 */
export function mambaFromTensors(weights: MambaWeights, source = 'model'): MambaLM {
  const tensors = validateTensors(weights.config, weights.tensors, source);
  const model = new MambaLM(weights.config);
  try {
    model.loadStateDict(new Map(tensors.map((t) => [t.name, t])));
  } catch (error) {
    model.dispose();
    throw error;
  }
  return model.eval();
}
