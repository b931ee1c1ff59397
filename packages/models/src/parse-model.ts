import { type ByteSource, headOf, memorySource } from './byte-source';
import type { ModelConfig } from './config';
import { DETECT_BYTES, detectModelFormat, unknownFormatError } from './detect';
import { checkFiniteKept, checkFiniteWeights } from './finite';
import { readGguf } from './gguf/llama';
import { type LoadOptions, type NamedQuantizedTensor, weightsModeOf } from './gguf/quantized';
import { halfLinearTensors, type NamedHalfTensor, storedHalfType } from './half-linears';
import { parseHfConfig } from './hf/config';
import { fromHfTensors } from './hf/names';
import { readLlama2c } from './llama2c/read';
import { isLoomConfigJson, parseLoomConfigJson } from './loom-config';
import type { SafetensorsDType } from './safetensors/dtype';
import { readSafetensors } from './safetensors/read';
import type { NamedTensor } from './tensor';
import { validateTensors } from './validate';

/** Where a loaded model came from: a llama2.c `.bin`, a Hugging Face safetensors model, a Loom checkpoint, or GGUF. */
export type LoadedModelFormat = 'llama2c' | 'hf' | 'loom' | 'gguf';

export interface LoadedModel {
  format: LoadedModelFormat;
  config: ModelConfig;
  /**
   * Loom names and layouts, validated against `config`; without the linear weights a GGUF file keeps only as blocks
   * or halves (`quantized`, `halves`), which are never widened.
   */
  tensors: NamedTensor[];
  /** A GGUF file's Q8_0 / Q4_0 / Q4_K / Q6_K linear-layer weights, kept quantized when loaded with `weights: 'quantized'`. */
  quantized?: NamedQuantizedTensor[];
  /**
   * A BF16 / F16 safetensors checkpoint's or GGUF file's linear-layer weights, kept at 16 bits when loaded with
   * `weights: 'quantized'` (a safetensors file's are in `tensors` too).
   */
  halves?: NamedHalfTensor[];
  /** Loom tokenizer JSON text: a Loom checkpoint's tokenizer.json when it has one, or a GGUF file's vocabulary. */
  tokenizerJson?: string;
}

/** With `weights: 'quantized'`, a 16-bit checkpoint's linear weights packed back to their stored type. */
function keptHalves(
  tensors: readonly NamedTensor[],
  dtypes: ReadonlyMap<string, SafetensorsDType>,
  options: LoadOptions,
): { halves?: NamedHalfTensor[] } {
  const type = weightsModeOf(options) === 'quantized' ? storedHalfType(dtypes) : undefined;
  return type === undefined ? {} : { halves: halfLinearTensors(tensors, type) };
}

function readRecognised(file: ByteSource, configJson: unknown, options: LoadOptions): LoadedModel {
  const source = file.name;
  const head = headOf(file, DETECT_BYTES);
  switch (detectModelFormat(head)) {
    case 'llama2c':
      return { format: 'llama2c', ...readLlama2c(file) };
    case 'gguf':
      return { format: 'gguf', ...readGguf(file, options) };
    case 'safetensors': {
      if (configJson === undefined) {
        throw new Error(
          `${source}: a safetensors file says nothing about the architecture; pass the config.json (Hugging Face or Loom) that came with it`,
        );
      }
      // The config first: it is small, and a bad one is refused before any weight is read.
      if (isLoomConfigJson(configJson)) {
        const { config } = parseLoomConfigJson(configJson, `config.json of ${source}`);
        const contents = readSafetensors(file);
        const tensors = validateTensors(config, contents.tensors, source);
        return { format: 'loom', config, tensors, ...keptHalves(tensors, contents.dtypes, options) };
      }
      const config = parseHfConfig(configJson, `config.json of ${source}`);
      const contents = readSafetensors(file);
      const tensors = fromHfTensors(config, contents.tensors, source);
      return { format: 'hf', config, tensors, ...keptHalves(tensors, contents.dtypes, options) };
    }
    case undefined:
      throw unknownFormatError(head, source);
  }
}

/**
 * Reads model weights from a byte source, recognising the format from its first bytes; the
 * header is checked before any tensor is read, and the weights are checked to be finite.
 */
export function readModel(file: ByteSource, configJson: unknown, options: LoadOptions = {}): LoadedModel {
  const loaded = readRecognised(file, configJson, options);
  checkFiniteWeights(loaded.tensors, file.name);
  checkFiniteKept(loaded, file.name);
  return loaded;
}

/**
 * Parses model weights from bytes (for example fetched in a browser), recognising the format from the content: a
 * llama2.c `.bin` needs nothing else; safetensors needs the parsed config.json that came with it, Hugging Face
 * (Llama, GPT-2) or Loom. Tensors are validated against the config. `source` names the weights in errors; `options`
 * as for `loadModelFile`.
 */
export function parseModel(
  weights: Uint8Array,
  configJson: unknown,
  source = 'model',
  options: LoadOptions = {},
): LoadedModel {
  return readModel(memorySource(weights, source), configJson, options);
}
