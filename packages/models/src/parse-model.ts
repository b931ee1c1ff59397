import type { ModelConfig } from './config';
import { detectModelFormat, unknownFormatError } from './detect';
import { parseHfConfig } from './hf/config';
import { fromHfTensors } from './hf/names';
import { parseLlama2c } from './llama2c/read';
import { isLoomConfigJson, parseLoomConfigJson } from './loom-config';
import { parseSafetensors } from './safetensors/read';
import type { NamedTensor } from './tensor';
import { validateTensors } from './validate';

/** Where a loaded model came from: a llama2.c `.bin`, a Hugging Face safetensors model, or a Loom checkpoint. */
export type LoadedModelFormat = 'llama2c' | 'hf' | 'loom';

export interface LoadedModel {
  format: LoadedModelFormat;
  config: ModelConfig;
  /** Loom names and layouts, validated against `config`. */
  tensors: NamedTensor[];
  /** A Loom checkpoint's tokenizer.json text, when it has one. */
  tokenizerJson?: string;
}

/**
 * Parses model weights from bytes (for example fetched in a browser), recognising the format from the content: a
 * llama2.c `.bin` needs nothing else; safetensors needs the parsed config.json that came with it, Hugging Face
 * (Llama, GPT-2) or Loom. Tensors are validated against the config. `source` names the weights in errors.
 */
export function parseModel(weights: Uint8Array, configJson: unknown, source = 'model'): LoadedModel {
  switch (detectModelFormat(weights)) {
    case 'llama2c':
      return { format: 'llama2c', ...parseLlama2c(weights, source) };
    case 'safetensors': {
      if (configJson === undefined) {
        throw new Error(
          `${source}: a safetensors file says nothing about the architecture; pass the config.json (Hugging Face or Loom) that came with it`,
        );
      }
      const { tensors } = parseSafetensors(weights, source);
      if (isLoomConfigJson(configJson)) {
        const { config } = parseLoomConfigJson(configJson, `config.json of ${source}`);
        return { format: 'loom', config, tensors: validateTensors(config, tensors, source) };
      }
      const config = parseHfConfig(configJson, `config.json of ${source}`);
      return { format: 'hf', config, tensors: fromHfTensors(config, tensors, source) };
    }
    case undefined:
      throw unknownFormatError(weights, source);
  }
}
