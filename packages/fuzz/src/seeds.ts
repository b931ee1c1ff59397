import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expectedTensors,
  type ModelConfig,
  type NamedTensor,
  saveCheckpoint,
  serializeGguf,
  serializeLlama2c,
  serializeSafetensors,
  toHfConfig,
  toHfTensors,
} from '@loom/models';
import { bytesToUnicode, CharTokenizer, loadTokenizer } from '@loom/tokenizer';
import { Random } from './random';

/** What a case's files are handed to: the model loader (a path) or the tokenizer loader (bytes). */
export type Target = 'model' | 'tokenizer';

/** A valid input of one format: its files by name, and which of them (or '' for the folder) the loader gets. */
export interface Seed {
  readonly name: string;
  readonly target: Target;
  readonly entry: string;
  readonly files: Readonly<Record<string, Uint8Array>>;
}

const encoder = new TextEncoder();
const json = (value: unknown) => encoder.encode(JSON.stringify(value, null, 1));

const llama: ModelConfig = {
  preset: 'llama',
  vocabSize: 12,
  dim: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  hiddenDim: 12,
  maxSeqLen: 6,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: true,
  bias: false,
};
const gpt2: ModelConfig = { ...llama, preset: 'gpt2', numKvHeads: 2, hiddenDim: 16, bias: true };

function weights(config: ModelConfig): NamedTensor[] {
  const random = new Random(7);
  return expectedTensors(config).map(({ name, shape }) => ({
    name,
    shape,
    data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random.next() - 0.5),
  }));
}

/** The pieces of a small llama2.c vocabulary: the three specials, the 256 byte tokens, then merges of "the". */
const LLAMA2C_PIECES = [
  '<unk>',
  '<s>',
  '</s>',
  ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`),
  ' ',
  't',
  'h',
  'e',
  'th',
  'he',
  'the',
  ' t',
  ' the',
  'é',
];

/** The seed vocabulary's scores: 0 for the specials and bytes, then falling, so that earlier merges win. */
function llama2cScore(id: number): number {
  return id < 259 ? 0 : -(id - 259);
}

/** A llama2.c tokenizer.bin: int32 max token length, then per piece a float32 score, an int32 length, the bytes. */
function llama2cTokenizerBin(): Uint8Array {
  const pieces = LLAMA2C_PIECES.map((piece) => encoder.encode(piece));
  const bytes = new Uint8Array(4 + pieces.reduce((sum, piece) => sum + 8 + piece.length, 0));
  const view = new DataView(bytes.buffer);
  view.setInt32(0, Math.max(...pieces.map((piece) => piece.length)), true);
  let offset = 4;
  pieces.forEach((piece, id) => {
    view.setFloat32(offset, llama2cScore(id), true);
    view.setInt32(offset + 4, piece.length, true);
    bytes.set(piece, offset + 8);
    offset += 8 + piece.length;
  });
  return bytes;
}

/** Byte-level BPE merges in rank order; ids 256.. follow the byte tokens. */
const BPE_MERGES: readonly (readonly [string, string])[] = [
  ['t', 'h'],
  ['th', 'e'],
  [' ', 't'],
  [' t', 'he'],
  ['h', 'e'],
];

function tiktokenText(): string {
  const lines = Array.from({ length: 256 }, (_, b) => `${Buffer.from([b]).toString('base64')} ${b}`);
  BPE_MERGES.forEach(([left, right], rank) => {
    lines.push(`${Buffer.from(left + right, 'latin1').toString('base64')} ${256 + rank}`);
  });
  return `${lines.join('\n')}\n`;
}

function hfTokenizerJson(): unknown {
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[bytesToUnicode(Uint8Array.of(b))] = b;
  const unicode = (text: string) => bytesToUnicode(encoder.encode(text));
  BPE_MERGES.forEach(([left, right], rank) => {
    vocab[unicode(left + right)] = 256 + rank;
  });
  const endOfText = 256 + BPE_MERGES.length;
  vocab['<|endoftext|>'] = endOfText;
  return {
    version: '1.0',
    added_tokens: [{ id: endOfText, content: '<|endoftext|>', special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel' },
    model: {
      type: 'BPE',
      vocab,
      merges: BPE_MERGES.map(([left, right]) => `${unicode(left)} ${unicode(right)}`),
    },
  };
}

/** The files of a Loom checkpoint folder (config.json with its manifest, model.safetensors, tokenizer.json). */
function loomCheckpointFiles(tokenizerJson: Uint8Array): Record<string, Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'loom-fuzz-seed-'));
  try {
    saveCheckpoint(dir, {
      config: llama,
      tensors: weights(llama),
      tokenizerJson: new TextDecoder().decode(tokenizerJson),
    });
    return Object.fromEntries(
      readdirSync(dir).map((name) => [name, new Uint8Array(readFileSync(join(dir, name)))]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One valid input of every format Loom reads, small enough that thousands of mutated copies load in seconds. */
export function buildSeeds(): Seed[] {
  const tokenizerBin = llama2cTokenizerBin();
  const loomTokenizer = json(loadTokenizer(tokenizerBin, 'seed tokenizer.bin').toJSON());
  const seeds: Seed[] = [
    {
      name: 'llama2c',
      target: 'model',
      entry: 'model.bin',
      files: { 'model.bin': serializeLlama2c(llama, weights(llama)) },
    },
    {
      name: 'llama2c-tokenizer',
      target: 'tokenizer',
      entry: 'tokenizer.bin',
      files: { 'tokenizer.bin': tokenizerBin },
    },
    {
      name: 'tiktoken',
      target: 'tokenizer',
      entry: 'ranks.tiktoken',
      files: { 'ranks.tiktoken': encoder.encode(tiktokenText()) },
    },
    {
      name: 'hf-tokenizer',
      target: 'tokenizer',
      entry: 'tokenizer.json',
      files: { 'tokenizer.json': json(hfTokenizerJson()) },
    },
    {
      name: 'loom-tokenizer',
      target: 'tokenizer',
      entry: 'tokenizer.json',
      files: { 'tokenizer.json': loomTokenizer },
    },
    {
      name: 'char-tokenizer',
      target: 'tokenizer',
      entry: 'tokenizer.json',
      files: {
        'tokenizer.json': json(
          CharTokenizer.fromCorpus('hello wörld', { specialTokens: ['<eos>'] }).toJSON(),
        ),
      },
    },
  ];
  // Rows of 32 so that Q8_0 and Q4_0 apply; the vocabulary is the llama2.c seed's, in GGUF's SentencePiece form.
  const ggufModel: ModelConfig = {
    ...llama,
    vocabSize: LLAMA2C_PIECES.length,
    dim: 32,
    hiddenDim: 64,
    numHeads: 4,
    numKvHeads: 2,
  };
  const vocabulary = { pieces: LLAMA2C_PIECES, scores: LLAMA2C_PIECES.map((_, id) => llama2cScore(id)) };
  for (const weightType of ['F32', 'Q8_0', 'Q4_0'] as const) {
    const bytes = serializeGguf(ggufModel, weights(ggufModel), { weightType, vocabulary });
    seeds.push({
      name: `gguf-${weightType}`,
      target: 'model',
      entry: 'model.gguf',
      files: { 'model.gguf': bytes },
    });
  }
  seeds.push({
    name: 'loom-checkpoint',
    target: 'model',
    entry: '',
    files: loomCheckpointFiles(loomTokenizer),
  });
  for (const config of [llama, gpt2]) {
    seeds.push({
      name: `hf-${config.preset}`,
      target: 'model',
      entry: 'model.safetensors',
      files: {
        'model.safetensors': serializeSafetensors(toHfTensors(config, weights(config))),
        'config.json': json(toHfConfig(config)),
      },
    });
  }
  return seeds;
}
