import { headDim, validateConfig } from '@loom/nn';
import { bytesOf } from '../bytes';
import type { InputStatistics } from '../calibration/input-statistics';
import type { ModelConfig } from '../config';
import type { NamedTensor } from '../tensor';
import { validateTensors } from '../validate';
import { quantizeQ4_0Calibrated } from './calibrated-q4-0';
import { GGUF_MAGIC } from './header';
import { BLOCK_SIZE, type QuantizedType, quantize } from './quantize';

/**
 * How weight matrices are stored; norms and other 1-D tensors stay F32. A matrix whose rows are not whole blocks of
 * the type gets its fallback (`GGUF_FALLBACK`), and stays F32 when its rows are not whole blocks of that either.
 */
export type GgufWeightType = 'F32' | QuantizedType;

/**
 * The type a matrix gets when its rows are not a multiple of 256 (a K-quant super-block): the 32-block type of at
 * least as many bits per weight (Q4_K 4.5 → Q4_0 4.5, Q6_K 6.56 → Q8_0 8.5), as llama-quantize also falls back.
 */
export const GGUF_FALLBACK: Readonly<Partial<Record<GgufWeightType, GgufWeightType>>> = {
  Q4_K: 'Q4_0',
  Q6_K: 'Q8_0',
};

/** A SentencePiece vocabulary (as a llama2.c tokenizer holds it: pieces with plain spaces, and their scores). */
export interface GgufVocabulary {
  readonly pieces: readonly string[];
  readonly scores: readonly number[];
}

export interface GgufWriteOptions {
  readonly weightType?: GgufWeightType;
  /** Per-tensor types by Loom tensor name, over `weightType` (e.g. `output.weight` in Q6_K, as llama.cpp's Q4_K_M). */
  readonly tensorTypes?: Readonly<Record<string, GgufWeightType>>;
  readonly vocabulary?: GgufVocabulary;
  /** `general.name`. */
  readonly name?: string;
  /**
   * Calibration statistics of the linear layers' inputs by weight name (`collectInputStatistics`): Q4_0 matrices
   * that have them are rounded to keep the layer's outputs close (`quantizeQ4_0Calibrated`) instead of by
   * llama.cpp's reference rule.
   */
  readonly statistics?: ReadonlyMap<string, InputStatistics>;
}

const TYPE_IDS: Readonly<Record<GgufWeightType, number>> = {
  F32: 0,
  F16: 1,
  BF16: 30,
  Q8_0: 8,
  Q4_0: 2,
  Q4_K: 12,
  Q6_K: 14,
};
/**
 * llama.cpp's `general.file_type` for each (ALL_F32 0, MOSTLY_F16 1, MOSTLY_BF16 32, MOSTLY_Q8_0 7, MOSTLY_Q4_0 2,
 * MOSTLY_Q4_K_S 14, MOSTLY_Q6_K 18).
 */
const FILE_TYPES: Readonly<Record<GgufWeightType, number>> = {
  F32: 0,
  F16: 1,
  BF16: 32,
  Q8_0: 7,
  Q4_0: 2,
  Q4_K: 14,
  Q6_K: 18,
};
const ALIGNMENT = 32;

/** Value types of the GGUF metadata Loom writes. */
type Entry =
  | { readonly type: 'u32'; readonly value: number }
  | { readonly type: 'f32'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'strings'; readonly value: readonly string[] }
  | { readonly type: 'f32s'; readonly value: readonly number[] }
  | { readonly type: 'i32s'; readonly value: readonly number[] };

/** Grows as it is written; little-endian throughout. */
class Writer {
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private room(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  u32(value: number): void {
    this.room(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }

  i32(value: number): void {
    this.room(4);
    this.view.setInt32(this.length, value, true);
    this.length += 4;
  }

  u64(value: number): void {
    this.room(8);
    this.view.setBigUint64(this.length, BigInt(value), true);
    this.length += 8;
  }

  f32(value: number): void {
    this.room(4);
    this.view.setFloat32(this.length, value, true);
    this.length += 4;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  string(text: string): void {
    const bytes = new TextEncoder().encode(text);
    this.u64(bytes.length);
    this.raw(bytes);
  }

  pad(alignment: number): void {
    this.raw(new Uint8Array((alignment - (this.length % alignment)) % alignment));
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

const ARRAY = 9;
const SCALAR_TYPE: Readonly<Record<'u32' | 'f32' | 'string', number>> = { u32: 4, f32: 6, string: 8 };

function writeEntry(out: Writer, key: string, entry: Entry): void {
  out.string(key);
  switch (entry.type) {
    case 'u32':
    case 'f32':
    case 'string':
      out.u32(SCALAR_TYPE[entry.type]);
      if (entry.type === 'u32') out.u32(entry.value);
      else if (entry.type === 'f32') out.f32(entry.value);
      else out.string(entry.value);
      return;
    case 'strings':
      out.u32(ARRAY);
      out.u32(8);
      out.u64(entry.value.length);
      for (const text of entry.value) out.string(text);
      return;
    case 'f32s':
    case 'i32s':
      out.u32(ARRAY);
      out.u32(entry.type === 'f32s' ? 6 : 5);
      out.u64(entry.value.length);
      for (const value of entry.value) {
        if (entry.type === 'f32s') out.f32(value);
        else out.i32(value);
      }
  }
}

/** GGUF `token_type`: 1 normal, 2 unknown, 3 control, 6 byte. */
function tokenType(piece: string, id: number): number {
  if (id === 0) return 2;
  if (id <= 2) return 3;
  return /^<0x[0-9A-F]{2}>$/.test(piece) ? 6 : 1;
}

function vocabularyEntries(vocabulary: GgufVocabulary, vocabSize: number): [string, Entry][] {
  if (vocabulary.pieces.length !== vocabSize || vocabulary.scores.length !== vocabSize) {
    throw new Error(
      `serializeGguf: the vocabulary has ${vocabulary.pieces.length} pieces and ${vocabulary.scores.length} scores; the model's vocabSize is ${vocabSize}`,
    );
  }
  return [
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    [
      'tokenizer.ggml.tokens',
      { type: 'strings', value: vocabulary.pieces.map((piece) => piece.replaceAll(' ', '\u2581')) },
    ],
    ['tokenizer.ggml.scores', { type: 'f32s', value: vocabulary.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: vocabulary.pieces.map(tokenType) }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
  ];
}

/** GGUF's name of a Loom llama tensor. */
function ggufName(name: string): string {
  const top: Readonly<Record<string, string>> = {
    'tok_embeddings.weight': 'token_embd.weight',
    'norm.weight': 'output_norm.weight',
    'output.weight': 'output.weight',
  };
  if (name in top) return top[name];
  const block: Readonly<Record<string, string>> = {
    attention_norm: 'attn_norm',
    'attention.wq': 'attn_q',
    'attention.wk': 'attn_k',
    'attention.wv': 'attn_v',
    'attention.wo': 'attn_output',
    ffn_norm: 'ffn_norm',
    'feed_forward.w1': 'ffn_gate',
    'feed_forward.w2': 'ffn_down',
    'feed_forward.w3': 'ffn_up',
  };
  const match = /^layers\.(\d+)\.(.+)\.weight$/.exec(name);
  if (match === null || !(match[2] in block))
    throw new Error(`serializeGguf: no GGUF name for tensor "${name}"`);
  return `blk.${match[1]}.${block[match[2]]}.weight`;
}

/** A tensor as GGUF will store it. */
export interface GgufTensorType {
  readonly name: string;
  readonly shape: readonly number[];
  readonly type: GgufWeightType;
}

/** The type one tensor is stored in: 1-D tensors F32; matrices the asked type, else its fallback, else F32. */
function storedType(tensor: NamedTensor, options: GgufWriteOptions): GgufWeightType {
  const asked = options.tensorTypes?.[tensor.name] ?? options.weightType ?? 'F32';
  if (tensor.shape.length !== 2) return 'F32';
  const row = tensor.shape[1];
  for (let type: GgufWeightType | undefined = asked; type !== undefined; type = GGUF_FALLBACK[type]) {
    if (type === 'F32' || row % BLOCK_SIZE[type] === 0) return type;
  }
  return 'F32';
}

/** The type each tensor of a model is stored in by `serializeGguf` with these options, in order. */
export function ggufTensorTypes(
  tensors: readonly NamedTensor[],
  options: GgufWriteOptions = {},
): GgufTensorType[] {
  return tensors.map((tensor) => ({
    name: tensor.name,
    shape: tensor.shape,
    type: storedType(tensor, options),
  }));
}

/** llama.cpp's key for a sliding-window model's window (Mistral); none for full attention. */
function slidingWindowEntry(config: ModelConfig): [string, Entry][] {
  return config.slidingWindow === undefined
    ? []
    : [['llama.attention.sliding_window', { type: 'u32', value: config.slidingWindow }]];
}

/**
 * Serialises a Loom llama model as GGUF (version 3), as llama.cpp reads it: `llama.*` metadata, the SentencePiece
 * vocabulary when given, and the weights in F32, or with matrices in Q8_0, Q4_0, Q4_K or Q6_K (norms stay F32;
 * see `GgufWeightType` for matrices whose rows are not whole blocks).
 */
export function serializeGguf(
  config: ModelConfig,
  tensors: readonly NamedTensor[],
  options: GgufWriteOptions = {},
): Uint8Array {
  validateConfig(config, 'serializeGguf');
  if (config.preset !== 'llama' || config.bias) {
    throw new Error(
      `serializeGguf: Loom writes GGUF for llama models without biases; this is ${config.preset}${config.bias ? ' with biases' : ''}`,
    );
  }
  if (config.ropeScaling !== undefined) {
    throw new Error(
      `serializeGguf: Loom does not write GGUF's rope scaling keys yet; this model has ropeScaling ${config.ropeScaling.type} — save it as safetensors instead`,
    );
  }
  if (config.moe !== undefined) {
    throw new Error(
      `serializeGguf: Loom does not write GGUF's expert tensors yet; this model has ${config.moe.experts} experts — save it as safetensors instead`,
    );
  }
  const ordered = validateTensors(config, tensors, 'serializeGguf');
  const weightType = options.weightType ?? 'F32';
  const unknown = Object.keys(options.tensorTypes ?? {}).filter(
    (name) => !ordered.some((t) => t.name === name),
  );
  if (unknown.length > 0) {
    throw new Error(`serializeGguf: tensorTypes names ${unknown.join(', ')}, which the model does not have`);
  }
  const entries: [string, Entry][] = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: options.name ?? 'loom' }],
    ['general.file_type', { type: 'u32', value: FILE_TYPES[weightType] }],
    ['llama.context_length', { type: 'u32', value: config.maxSeqLen }],
    ['llama.embedding_length', { type: 'u32', value: config.dim }],
    ['llama.feed_forward_length', { type: 'u32', value: config.hiddenDim }],
    ['llama.block_count', { type: 'u32', value: config.numLayers }],
    ['llama.attention.head_count', { type: 'u32', value: config.numHeads }],
    ['llama.attention.head_count_kv', { type: 'u32', value: config.numKvHeads }],
    ['llama.rope.dimension_count', { type: 'u32', value: headDim(config) }],
    ['llama.rope.freq_base', { type: 'f32', value: config.ropeTheta }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: config.normEps }],
    ...slidingWindowEntry(config),
    ...(options.vocabulary === undefined ? [] : vocabularyEntries(options.vocabulary, config.vocabSize)),
  ];
  const stored = ordered.map((tensor) => {
    const type = storedType(tensor, options);
    const statistics = type === 'Q4_0' ? options.statistics?.get(tensor.name) : undefined;
    const bytes =
      type === 'F32'
        ? bytesOf(tensor.data)
        : statistics
          ? quantizeQ4_0Calibrated(tensor.data, statistics)
          : quantize(tensor.data, type);
    return { tensor, type: TYPE_IDS[type], bytes };
  });
  const out = new Writer();
  out.u32(GGUF_MAGIC);
  out.u32(3);
  out.u64(stored.length);
  out.u64(entries.length);
  for (const [key, entry] of entries) writeEntry(out, key, entry);
  let offset = 0;
  for (const { tensor, type, bytes } of stored) {
    out.string(ggufName(tensor.name));
    out.u32(tensor.shape.length);
    for (const size of [...tensor.shape].reverse()) out.u64(size);
    out.u32(type);
    out.u64(offset);
    offset += Math.ceil(bytes.length / ALIGNMENT) * ALIGNMENT;
  }
  out.pad(ALIGNMENT);
  for (const { bytes } of stored) {
    out.raw(bytes);
    out.pad(ALIGNMENT);
  }
  return out.result();
}
