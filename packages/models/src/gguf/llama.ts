import { CONFIG_LIMITS, validateConfig } from '@loom/nn';
import type { HalfType, QuantType } from '@loom/tensor';
import type { ByteSource } from '../byte-source';
import { compactWeights } from '../compact-weights';
import type { ModelConfig } from '../config';
import type { NamedHalfTensor } from '../half-linears';
import type { NamedTensor } from '../tensor';
import { validateTensors } from '../validate';
import { GGML_TYPES, type GgmlTypeName, OTHER_GGML_TYPES } from './ggml-types';
import { type GgufTensorInfo, readGgufHeader } from './header';
import { Metadata } from './metadata';
import {
  isCompactWeight,
  type LoadOptions,
  type NamedQuantizedTensor,
  repackGgufBlocks,
  weightsModeOf,
} from './quantized';
import { ggufTokenizerJson } from './tokenizer';

/** llama.cpp's names of a Llama block's tensors, and Loom's. */
const BLOCK_NAMES: Readonly<Record<string, string>> = {
  attn_norm: 'attention_norm',
  attn_q: 'attention.wq',
  attn_k: 'attention.wk',
  attn_v: 'attention.wv',
  attn_output: 'attention.wo',
  ffn_norm: 'ffn_norm',
  ffn_gate: 'feed_forward.w1',
  ffn_down: 'feed_forward.w2',
  ffn_up: 'feed_forward.w3',
};
const TOP_NAMES: Readonly<Record<string, string>> = {
  'token_embd.weight': 'tok_embeddings.weight',
  'output_norm.weight': 'norm.weight',
  'output.weight': 'output.weight',
};

/** Loom's name of a GGUF Llama tensor, or undefined when Loom's llama has no such tensor. */
function loomName(name: string): string | undefined {
  if (name in TOP_NAMES) return TOP_NAMES[name];
  const block = /^blk\.(\d+)\.([a-z_]+)\.weight$/.exec(name);
  if (block === null || !(block[2] in BLOCK_NAMES)) return undefined;
  return `layers.${block[1]}.${BLOCK_NAMES[block[2]]}.weight`;
}

function configOf(meta: Metadata, vocabSize: number, tied: boolean): ModelConfig {
  const int = (key: string, limit: number, fallback?: number) =>
    meta.integer(`llama.${key}`, 1, limit, fallback);
  const numHeads = int('attention.head_count', CONFIG_LIMITS.numHeads);
  // llama.cpp's sliding window of attention (Mistral); absent or 0 is full attention.
  const window = meta.integer('llama.attention.sliding_window', 0, CONFIG_LIMITS.maxSeqLen, 0);
  return {
    preset: 'llama',
    vocabSize,
    dim: int('embedding_length', CONFIG_LIMITS.dim),
    numLayers: int('block_count', CONFIG_LIMITS.numLayers),
    numHeads,
    numKvHeads: int('attention.head_count_kv', CONFIG_LIMITS.numKvHeads, numHeads),
    hiddenDim: int('feed_forward_length', CONFIG_LIMITS.hiddenDim),
    maxSeqLen: int('context_length', CONFIG_LIMITS.maxSeqLen),
    normEps: meta.positive('llama.attention.layer_norm_rms_epsilon', 1e-5),
    ropeTheta: meta.positive('llama.rope.freq_base', 10000),
    tiedEmbeddings: tied,
    bias: false,
    ...(window > 0 ? { slidingWindow: window } : {}),
  };
}

/** Bytes a tensor takes in the file, or undefined when its type is not one Loom reads (refused when read). */
function storedBytes(info: GgufTensorInfo): number | undefined {
  const type = GGML_TYPES.get(info.type);
  if (type === undefined) return undefined;
  return (info.dims.reduce((a, b) => a * b, 1) / type.blockSize) * type.blockBytes;
}

/** Tensors may not share bytes: otherwise a small file could name the same gigabyte a thousand times. */
function checkNoOverlap(source: string, infos: readonly GgufTensorInfo[]): void {
  const sorted = [...infos].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1];
    const end = previous.offset + (storedBytes(previous) ?? 0);
    if (end > sorted[i].offset) {
      throw new Error(
        `${source}: tensors "${previous.name}" and "${sorted[i].name}" overlap (bytes ${previous.offset}–${end} and from ${sorted[i].offset}); the file is corrupt`,
      );
    }
  }
}

/** The GGUF types whose linear-layer weights can stay quantized. */
const KEPT_QUANTIZED: Readonly<Partial<Record<GgmlTypeName, QuantType>>> = {
  Q8_0: 'q8_0',
  Q4_0: 'q4_0',
  Q4_K: 'q4_k',
  Q6_K: 'q6_k',
};

/** The GGUF types whose linear-layer weights can stay at 16 bits. */
const KEPT_HALF: Readonly<Partial<Record<GgmlTypeName, HalfType>>> = { F16: 'f16', BF16: 'bf16' };

/**
 * One tensor's float32 values: its size checked by arithmetic against the file before anything is read. When
 * `quantized` is given, the Q8_0 / Q4_0 / Q4_K / Q6_K blocks of a linear layer's weight or of the token embedding are
 * pushed onto it, repacked, instead; so are F16 / BF16 ones onto `halves`, as they are. Undefined for a weight kept
 * so (see isCompactWeight).
 */
function readTensor(
  file: ByteSource,
  info: GgufTensorInfo,
  name: string,
  quantized?: NamedQuantizedTensor[],
  halves?: NamedHalfTensor[],
): NamedTensor | undefined {
  const type = GGML_TYPES.get(info.type);
  if (type === undefined) {
    const known = OTHER_GGML_TYPES.get(info.type);
    throw new Error(
      `${file.name}: tensor "${info.name}" has ggml type ${known ?? info.type}; Loom reads ${[...GGML_TYPES.values()].map((t) => t.name).join(', ')} — requantize it (llama-quantize) to one of them`,
    );
  }
  const count = info.dims.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(count) || info.dims[0] % type.blockSize !== 0) {
    throw new Error(
      `${file.name}: tensor "${info.name}" has dims [${info.dims.join(', ')}]; a ${type.name} row must be a multiple of ${type.blockSize} elements`,
    );
  }
  const bytes = (count / type.blockSize) * type.blockBytes;
  if (info.offset + bytes > file.size) {
    throw new Error(
      `${file.name}: tensor "${info.name}" needs ${bytes} bytes at byte ${info.offset} but the file holds ${file.size} — the file is truncated`,
    );
  }
  const raw = new Uint8Array(file.read(info.offset, info.offset + bytes));
  // GGUF lists dims fastest-varying first; Loom's shapes are row-major, so [in, out] becomes [out, in].
  const shape = [...info.dims].reverse();
  const kept = KEPT_QUANTIZED[type.name];
  if (quantized && kept && shape.length === 2 && isCompactWeight(name)) {
    quantized.push(repackGgufBlocks(name, kept, [shape[0], shape[1]], raw));
    return undefined;
  }
  const half = KEPT_HALF[type.name];
  if (halves && half && shape.length === 2 && shape[1] % 2 === 0 && isCompactWeight(name)) {
    // The file's bytes as they are: two 16-bit values per little-endian word, rows [out, in].
    halves.push({
      name,
      type: half,
      shape: [shape[0], shape[1]],
      packed: new Int32Array(raw.buffer, 0, count / 2),
    });
    return undefined;
  }
  return { name, shape, data: type.dequantize(raw, count) };
}

/**
 * Reads a GGUF file of a Llama-architecture model: config from its metadata, its SentencePiece (`llama`) or
 * byte-level BPE (`gpt2`) vocabulary (when it has one) as a Loom tokenizer JSON, and its tensors widened to float32 (F32, F16, BF16,
 * Q8_0, Q4_0; each tensor's own type, whatever the file type says). Every size is checked before it is read. With
 * `weights: 'quantized'` the Q8_0 / Q4_0 / Q4_K / Q6_K blocks of the linear layers and the token embedding are
 * returned instead, in `quantized`, and F16 / BF16 ones packed as they are, in `halves`.
 */
export function readGguf(
  file: ByteSource,
  options: LoadOptions = {},
): {
  config: ModelConfig;
  tensors: NamedTensor[];
  quantized?: NamedQuantizedTensor[];
  halves?: NamedHalfTensor[];
  tokenizerJson?: string;
} {
  const header = readGgufHeader(file);
  const meta = new Metadata(header.metadata, file.name);
  const architecture = meta.text('general.architecture');
  if (architecture !== 'llama') {
    throw new Error(
      `${file.name}: metadata "general.architecture" is "${architecture}"; Loom reads GGUF models of architecture "llama"`,
    );
  }
  if (meta.has('llama.rope.scaling.type') && meta.text('llama.rope.scaling.type') !== 'none') {
    throw new Error(
      `${file.name}: metadata "llama.rope.scaling.type" is "${meta.text('llama.rope.scaling.type')}"; Loom implements plain RoPE only`,
    );
  }
  const unknown = header.tensors.filter((info) => loomName(info.name) === undefined).map((info) => info.name);
  if (unknown.length > 0) {
    throw new Error(
      `${file.name}: tensors ${unknown.slice(0, 6).join(', ')} are not part of a plain Llama (Loom knows token_embd, output_norm, output and blk.N.{${Object.keys(BLOCK_NAMES).join(',')}})`,
    );
  }
  const embeddings = header.tensors.find((info) => info.name === 'token_embd.weight');
  if (embeddings === undefined || embeddings.dims.length !== 2) {
    throw new Error(`${file.name}: has no two-dimensional token_embd.weight; not a Llama model file`);
  }
  const vocabSize = embeddings.dims[1];
  const tied = !header.tensors.some((info) => info.name === 'output.weight');
  const config = configOf(meta, vocabSize, tied);
  validateConfig(config, file.name);
  checkNoOverlap(file.name, header.tensors);
  const tokenizerJson = meta.has('tokenizer.ggml.model')
    ? ggufTokenizerJson(meta, config.vocabSize, file.name)
    : undefined;
  const quantized = weightsModeOf(options) === 'quantized' ? [] : undefined;
  const halves: NamedHalfTensor[] | undefined = quantized ? [] : undefined;
  const tensors = validateTensors(
    config,
    header.tensors.flatMap((info) => {
      const tensor = readTensor(file, info, loomName(info.name) ?? info.name, quantized, halves);
      return tensor === undefined ? [] : [tensor];
    }),
    file.name,
    compactWeights({ quantized, halves }),
  );
  const kept = {
    ...(quantized && quantized.length > 0 ? { quantized } : {}),
    ...(halves && halves.length > 0 ? { halves } : {}),
  };
  return tokenizerJson === undefined
    ? { config, tensors, ...kept }
    : { config, tensors, ...kept, tokenizerJson };
}
