import { readInteger, readObject } from '../../formats/json-read';

/** Reads a `{ "token": id }` vocabulary; ids must be at most `maxId` (the file's entry count bounds them). */
export function readVocab(value: unknown, source: string, path: string, maxId: number): Map<string, number> {
  const vocab = new Map<string, number>();
  for (const [token, id] of Object.entries(readObject(value, source, path))) {
    vocab.set(token, readInteger(id, source, `${path}[${JSON.stringify(token)}]`, 0, maxId));
  }
  return vocab;
}

/** The id of a token the model names (`unk_token`), which must be in its vocabulary. */
export function requireToken(
  vocab: ReadonlyMap<string, number>,
  token: string,
  source: string,
  path: string,
): number {
  const id = vocab.get(token);
  if (id === undefined) {
    throw new Error(`${source}: key "${path}": ${JSON.stringify(token)} is not in the model's vocabulary`);
  }
  return id;
}

/** The `<0xAB>` token names of byte fallback, by byte. */
const BYTE_TOKENS: readonly string[] = Array.from(
  { length: 256 },
  (_, byte) => `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`,
);

/** The ids of byte-fallback tokens for `bytes`, or undefined when one is missing from the vocabulary. */
export function byteFallbackIds(bytes: Uint8Array, vocab: ReadonlyMap<string, number>): number[] | undefined {
  const ids: number[] = [];
  for (const byte of bytes) {
    const id = vocab.get(BYTE_TOKENS[byte]);
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return ids;
}
