import type { Metadata } from './metadata';

/** The three SentencePiece control tokens at the ids Loom's llama2.c tokenizer fixes. */
const SENTENCEPIECE_SPECIALS = [
  { text: '<unk>', id: 0 },
  { text: '<s>', id: 1 },
  { text: '</s>', id: 2 },
];

/** GGUF `token_type` values. */
const CONTROL = 3;
const USER_DEFINED = 4;

/** A `llama` (SentencePiece) vocabulary as a Loom llama2.c tokenizer JSON: "▁" back to a space, scores as given. */
function sentencePieceJson(meta: Metadata, tokens: readonly string[], source: string): object {
  const scores = meta.numbers('tokenizer.ggml.scores', tokens.length);
  const bos = meta.integer('tokenizer.ggml.bos_token_id', 0, tokens.length - 1, 1);
  const eos = meta.integer('tokenizer.ggml.eos_token_id', 0, tokens.length - 1, 2);
  const fixed = SENTENCEPIECE_SPECIALS.every(({ text, id }) => tokens[id] === text);
  if (!fixed || bos !== 1 || eos !== 2) {
    throw new Error(
      `${source}: the SentencePiece vocabulary has <unk>, <s>, </s> = ${JSON.stringify(tokens.slice(0, 3))} and bos ${bos}, eos ${eos}; Loom reads vocabularies with them at ids 0, 1, 2 (as Llama 2 has)`,
    );
  }
  const pieces = tokens.map((token) => token.replaceAll('\u2581', ' '));
  return {
    format: 'loom-tokenizer',
    version: 1,
    kind: 'llama2c',
    specialTokens: SENTENCEPIECE_SPECIALS,
    bos,
    eos,
    maxTokenLength: Math.max(1, ...pieces.map((piece) => new TextEncoder().encode(piece).length)),
    pieceEncoding: 'utf8',
    pieces,
    scores,
  };
}

/** A `gpt2` (byte-level BPE) vocabulary as a Loom BPE tokenizer JSON: control and user-defined tokens are special. */
function byteLevelJson(meta: Metadata, tokens: readonly string[], source: string): object {
  const pre = meta.text('tokenizer.ggml.pre', 'gpt-2');
  if (pre !== 'gpt-2' && pre !== 'default') {
    throw new Error(
      `${source}: metadata "tokenizer.ggml.pre" is "${pre}"; Loom's byte-level BPE splits text as GPT-2 does ("gpt-2")`,
    );
  }
  const types = meta.has('tokenizer.ggml.token_type')
    ? meta.numbers('tokenizer.ggml.token_type', tokens.length)
    : [];
  const special = (id: number) => types[id] === CONTROL || types[id] === USER_DEFINED;
  const idOf = new Map(tokens.map((token, id) => [token, id]));
  const merges = meta.strings('tokenizer.ggml.merges').map((merge, index) => {
    const parts = merge.split(' ');
    const left = idOf.get(parts[0]);
    const right = idOf.get(parts[1]);
    if (parts.length !== 2 || left === undefined || right === undefined) {
      throw new Error(
        `${source}: metadata "tokenizer.ggml.merges"[${index}] is ${JSON.stringify(merge)}; expected two vocabulary tokens joined by a space`,
      );
    }
    return [left, right];
  });
  const optionalId = (key: string) => (meta.has(key) ? meta.integer(key, 0, tokens.length - 1) : null);
  return {
    format: 'loom-tokenizer',
    version: 1,
    kind: 'bpe',
    pattern: 'gpt2',
    merging: 'merges',
    merges,
    tokens: tokens.map((token, id) => (special(id) ? null : token)),
    specialTokens: tokens.flatMap((text, id) => (special(id) ? [{ text, id }] : [])),
    bos: optionalId('tokenizer.ggml.bos_token_id'),
    eos: optionalId('tokenizer.ggml.eos_token_id'),
  };
}

/** The GGUF file's vocabulary as Loom tokenizer JSON text; its token count must equal the model's vocabulary. */
export function ggufTokenizerJson(meta: Metadata, vocabSize: number, source: string): string {
  const model = meta.text('tokenizer.ggml.model');
  const tokens = meta.strings('tokenizer.ggml.tokens');
  if (tokens.length !== vocabSize) {
    throw new Error(
      `${source}: metadata "tokenizer.ggml.tokens" lists ${tokens.length} tokens but token_embd.weight has ${vocabSize} rows`,
    );
  }
  switch (model) {
    case 'llama':
      return JSON.stringify(sentencePieceJson(meta, tokens, source));
    case 'gpt2':
      return JSON.stringify(byteLevelJson(meta, tokens, source));
    default:
      throw new Error(
        `${source}: metadata "tokenizer.ggml.model" is "${model}"; Loom reads "llama" (SentencePiece) and "gpt2" (byte-level BPE) vocabularies`,
      );
  }
}
