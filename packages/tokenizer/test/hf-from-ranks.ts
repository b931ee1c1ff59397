import { bytesToUnicode, type Tokenizer } from '../src/index';

function key(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

/**
 * Builds a Hugging Face tokenizer.json (GPT-2 layout) from tiktoken ranks: the vocabulary in the byte-to-unicode
 * alphabet, and for each token the merge that makes it, found by running BPE on its bytes with lower ranks only.
 */
export function hfJsonFromRanks(tiktokenText: string): object {
  const ranks = new Map<string, number>();
  const tokens: Uint8Array[] = [];
  for (const line of tiktokenText.split('\n')) {
    if (line === '') continue;
    const [base64, rank] = line.split(' ');
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    ranks.set(key(bytes), Number(rank));
    tokens[Number(rank)] = bytes;
  }
  const vocab: Record<string, number> = {};
  tokens.forEach((bytes, rank) => {
    vocab[bytesToUnicode(bytes)] = rank;
  });
  const merges: string[] = [];
  tokens.forEach((bytes, rank) => {
    if (bytes.length < 2) return;
    let parts = [...bytes].map((b) => String.fromCharCode(b));
    while (parts.length > 2) {
      let best = Number.POSITIVE_INFINITY;
      let at = -1;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = ranks.get(parts[i] + parts[i + 1]);
        if (r !== undefined && r < rank && r < best) {
          best = r;
          at = i;
        }
      }
      if (at < 0) throw new Error(`token ${rank} cannot be built from lower ranks`);
      parts = [...parts.slice(0, at), parts[at] + parts[at + 1], ...parts.slice(at + 2)];
    }
    const toUnicode = (part: string) => bytesToUnicode(Uint8Array.from(part, (c) => c.charCodeAt(0)));
    merges.push(`${toUnicode(parts[0])} ${toUnicode(parts[1])}`);
  });
  const endOfText = tokens.length;
  vocab['<|endoftext|>'] = endOfText;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: endOfText,
        content: '<|endoftext|>',
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: true,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

/** A tiny byte-level tokenizer.json: the 256 bytes plus the given merges (in the byte-to-unicode alphabet). */
export function tinyHfJson(merges: readonly [string, string][]): object {
  const vocab: Record<string, number> = {};
  for (let byte = 0; byte < 256; byte++) vocab[bytesToUnicode(Uint8Array.of(byte))] = byte;
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  return {
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    decoder: { type: 'ByteLevel' },
    model: { type: 'BPE', vocab, merges: merges.map(([a, b]) => [a, b]) },
  };
}

/** Encodes then checks that `tokenizer` gives the same as `other` on `text`. */
export function sameEncoding(a: Tokenizer, b: Tokenizer, text: string): boolean {
  const x = a.encode(text);
  const y = b.encode(text);
  return x.length === y.length && x.every((id, i) => id === y[i]);
}
