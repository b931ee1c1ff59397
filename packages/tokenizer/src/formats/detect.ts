import { parseLlama2cTokenizer } from '../llama2c/format';
import { Llama2cTokenizer } from '../llama2c/tokenizer';
import type { Tokenizer } from '../tokenizer';
import { utf8Decode } from '../utf8';
import { tokenizerFromHfJson } from './hf-json';
import { isJsonObject, parseJson } from './json-read';
import { isLoomTokenizerJson, tokenizerFromJSON } from './loom-json';
import { tokenizerFromTiktoken } from './tiktoken';

/** The tokenizer file formats Loom reads. */
export type TokenizerFormat = 'tiktoken' | 'hf-json' | 'llama2c' | 'loom-json';

type Sniffed =
  | { readonly format: 'loom-json' | 'hf-json'; readonly json: unknown }
  | { readonly format: 'tiktoken' | 'llama2c' }
  | { readonly format: undefined; readonly reason: string };

function sniff(bytes: Uint8Array, source: string): Sniffed {
  let first = 0;
  while (first < bytes.length && /\s/.test(String.fromCharCode(bytes[first]))) first++;
  if (bytes[first] === 0x7b) {
    const json = parseJson(utf8Decode(bytes), source);
    if (isLoomTokenizerJson(json)) return { format: 'loom-json', json };
    if (isJsonObject(json) && isJsonObject(json.model)) return { format: 'hf-json', json };
    return { format: undefined, reason: 'JSON with neither "format": "loom-tokenizer" nor a "model" object' };
  }
  const firstLine = utf8Decode(bytes.subarray(0, 300)).split('\n')[0];
  if (/^[A-Za-z0-9+/]+=* \d+\r?$/.test(firstLine)) return { format: 'tiktoken' };
  try {
    parseLlama2cTokenizer(bytes, source);
    return { format: 'llama2c' };
  } catch (error) {
    return { format: undefined, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Recognises a tokenizer file from its content (never its name), or undefined. */
export function detectTokenizerFormat(bytes: Uint8Array): TokenizerFormat | undefined {
  try {
    return sniff(bytes, 'tokenizer file').format;
  } catch {
    return undefined;
  }
}

export interface LoadTokenizerOptions {
  /** For a Hugging Face tokenizer.json: the model's tokenizer_config.json (see `HfJsonOptions.config`). */
  readonly config?: unknown;
}

/** Loads a tokenizer file of any format Loom reads, recognised from its content; `source` names it in errors. */
export function loadTokenizer(
  bytes: Uint8Array,
  source = 'tokenizer file',
  options: LoadTokenizerOptions = {},
): Tokenizer {
  const sniffed = sniff(bytes, source);
  switch (sniffed.format) {
    case 'tiktoken':
      return tokenizerFromTiktoken(utf8Decode(bytes), { source });
    case 'hf-json':
      return tokenizerFromHfJson(sniffed.json, { source, config: options.config });
    case 'loom-json':
      return tokenizerFromJSON(sniffed.json, source);
    case 'llama2c':
      return new Llama2cTokenizer(parseLlama2cTokenizer(bytes, source), source);
    case undefined:
      throw new Error(
        `${source}: not a tokenizer file Loom recognises (${sniffed.reason}); expected a tiktoken rank file ` +
          '("<base64> <rank>" lines), a Hugging Face tokenizer.json, a llama2.c tokenizer.bin or a Loom tokenizer JSON',
      );
  }
}
