import {
  detectModelFormat,
  isLoomConfigJson,
  type LoadedModel,
  parseLoomConfigJson,
  parseModel,
} from '@loom/models';
import { detectTokenizerFormat, loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import type { ModelFile } from '../protocol';

/** A model and its tokenizer, read from the files the user picked. */
export interface ModelFiles {
  readonly loaded: LoadedModel;
  readonly tokenizer: Tokenizer;
  /** The names of the files used, for the page. */
  readonly source: string;
}

interface Bytes {
  readonly name: string;
  readonly bytes: Uint8Array<ArrayBuffer>;
}

const names = (files: readonly Bytes[]) => files.map((file) => file.name).join(', ');

function parseJson(file: Bytes): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(file.bytes));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${file.name}: not valid JSON (${reason}); pick the config.json that came with the weights`,
    );
  }
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Checks the size and SHA-256 a Loom config.json records for each picked file it lists. */
async function checkManifest(configJson: unknown, files: readonly Bytes[]): Promise<void> {
  const { files: manifest } = parseLoomConfigJson(configJson);
  for (const file of files) {
    const record = manifest[file.name];
    if (record === undefined) continue;
    if (file.bytes.length !== record.bytes || (await sha256(file.bytes)) !== record.sha256) {
      throw new Error(
        `${file.name}: its size or SHA-256 differs from what config.json records (${record.bytes} bytes); ` +
          'the checkpoint was altered or saved only in part — pick the files of one complete save',
      );
    }
  }
}

/**
 * Reads a model from the files picked together, each recognised by its content: weights (a llama2.c `.bin`,
 * safetensors or GGUF), a tokenizer file (llama2.c `tokenizer.bin`, a Hugging Face or Loom `tokenizer.json`; a GGUF
 * file's own vocabulary serves when none is picked) and, for safetensors, the `config.json` (Hugging Face or Loom).
 * A GGUF file's Q8_0 / Q4_0 / Q4_K linear weights are kept as blocks (`weights: 'quantized'`), which the model's
 * products then read. A trainer's optimizer state is ignored.
 */
export async function readModelFiles(picked: readonly ModelFile[]): Promise<ModelFiles> {
  const files = picked
    .map((file) => ({ name: file.name, bytes: new Uint8Array(file.bytes) }))
    .filter((file) => !file.name.startsWith('trainer-state'));
  if (files.length === 0)
    throw new Error('no files were given; pick the model weights and its tokenizer file');
  const weights = files.filter((file) => detectModelFormat(file.bytes.subarray(0, 64)) !== undefined);
  const rest = files.filter((file) => !weights.includes(file));
  const tokenizers = rest.filter((file) => detectTokenizerFormat(file.bytes) !== undefined);
  const configs = rest.filter((file) => !tokenizers.includes(file) && file.bytes[0] === 0x7b);
  const unknown = rest.filter((file) => !tokenizers.includes(file) && !configs.includes(file));
  if (weights.length === 0) {
    // The library's own error for the likeliest candidate says what the file is and what was expected.
    const candidate = unknown[0] ?? files[0];
    parseModel(candidate.bytes, undefined, candidate.name);
    throw new Error(
      `none of ${names(files)} holds model weights; add a llama2.c .bin or a model.safetensors`,
    );
  }
  if (weights.length > 1) {
    throw new Error(`${names(weights)} all hold weights; pick the files of one model only`);
  }
  if (unknown.length > 0) loadTokenizer(unknown[0].bytes, unknown[0].name); // throws naming the file
  const [weightFile] = weights;
  const gguf = detectModelFormat(weightFile.bytes.subarray(0, 64)) === 'gguf';
  if (tokenizers.length > 1) throw new Error(`${names(tokenizers)} are all tokenizers; pick one`);
  if (tokenizers.length === 0 && !gguf) {
    throw new Error(`no tokenizer among ${names(files)}; add the model's tokenizer.bin or tokenizer.json`);
  }
  const configFile = configs.find((file) => file.name === 'config.json') ?? configs[0];
  const configJson = configFile === undefined ? undefined : parseJson(configFile);
  if (isLoomConfigJson(configJson)) await checkManifest(configJson, files);
  const loaded = parseModel(weightFile.bytes, configJson, weightFile.name, { weights: 'quantized' });
  const [tokenizerFile] = tokenizers;
  const used = [weightFile, ...(tokenizerFile ? [tokenizerFile] : []), ...(configFile ? [configFile] : [])];
  if (tokenizerFile !== undefined) {
    return { loaded, tokenizer: loadTokenizer(tokenizerFile.bytes, tokenizerFile.name), source: names(used) };
  }
  if (loaded.tokenizerJson === undefined) {
    throw new Error(
      `${weightFile.name}: this GGUF file carries no vocabulary, and no tokenizer was picked; add the model's tokenizer.json or tokenizer.bin`,
    );
  }
  const vocabulary = new TextEncoder().encode(loaded.tokenizerJson);
  return {
    loaded,
    tokenizer: loadTokenizer(vocabulary, `${weightFile.name} (vocabulary)`),
    source: names(used),
  };
}
