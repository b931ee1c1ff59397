import type { ModelConfig } from '../config';
import type { NamedTensor, StoredTensor } from '../tensor';
import { validateTensors } from '../validate';
import { gpt2FromHf, gpt2ToHf } from './gpt2-names';
import { llamaFromHf, llamaToHf } from './llama-names';

function sameValues(a: Float32Array | Int32Array, b: Float32Array | Int32Array): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

/**
 * Renames the tensors of a Hugging Face checkpoint (Llama, Qwen2, Qwen3 or GPT-2, per `config.preset`) to Loom's
 * names and layouts, then validates them against the config. `tie_word_embeddings` decides the output layer: tied,
 * no `lm_head.weight` is needed, and one stored anyway is dropped when it equals the embeddings and refused when it
 * does not; untied, `lm_head.weight` must be there.
 */
export function fromHfTensors(
  config: ModelConfig,
  tensors: readonly StoredTensor[],
  source = 'model.safetensors',
): NamedTensor[] {
  const renamed = tensors.flatMap((tensor) =>
    config.preset === 'llama' ? llamaFromHf(config, tensor) : gpt2FromHf(config, tensor),
  );
  const output = renamed.find((tensor) => tensor.name === 'output.weight');
  const embeddings = renamed.find((tensor) => tensor.name === 'tok_embeddings.weight');
  if (!config.tiedEmbeddings && output === undefined && embeddings !== undefined) {
    throw new Error(
      `${source}: has no lm_head.weight, but the config does not tie the embeddings (tie_word_embeddings is false or absent); set tie_word_embeddings to true if the model shares its token embeddings with its output layer`,
    );
  }
  if (config.tiedEmbeddings && output !== undefined && embeddings !== undefined) {
    if (!sameValues(output.data, embeddings.data)) {
      throw new Error(
        `${source}: the config ties the embeddings (tie_word_embeddings) but lm_head.weight differs from the token embeddings; set tie_word_embeddings to false if the model has its own classifier`,
      );
    }
    return validateTensors(
      config,
      renamed.filter((tensor) => tensor !== output),
      source,
    );
  }
  return validateTensors(config, renamed, source);
}

/**
 * Loom tensors under Hugging Face names and layouts (Llama: `model.`-prefixed, q/k rows permuted for rotate-half
 * RoPE; GPT-2: fused c_attn and Conv1D [in, out] weights), validated against the config first.
 */
export function toHfTensors(
  config: ModelConfig,
  tensors: readonly NamedTensor[],
  source = 'model',
): NamedTensor[] {
  const valid = validateTensors(config, tensors, source);
  if (config.preset === 'llama') return valid.map((tensor) => llamaToHf(config, tensor));
  return gpt2ToHf(config, new Map(valid.map((tensor) => [tensor.name, tensor])));
}
