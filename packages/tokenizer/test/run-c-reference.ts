import type { Llama2cVocab } from '../src/index';

/**
 * llama2.c run.c's `encode` written as literally as run.c (O(n^2)): the reference the fast encoder is checked
 * against. Pieces are one char per byte, as run.c's C strings; a lookup gives the first id of a piece (run.c
 * bsearches a sorted copy, the same for a vocabulary without repeated pieces); byte fallback is `byte + 3`.
 */
export function runCEncoder(vocab: Llama2cVocab): (text: string) => number[] {
  const keys = vocab.pieces.map((piece) => String.fromCharCode(...piece));
  const ids = new Map<string, number>();
  keys.forEach((key, id) => {
    if (!ids.has(key)) ids.set(key, id);
  });
  const strLookup = (key: string): number => ids.get(key) ?? -1;
  return (text) => {
    const tokens: number[] = [];
    if (text !== '') tokens.push(strLookup(' '));
    const bytes = new TextEncoder().encode(text);
    let buffer = '';
    for (let i = 0; i < bytes.length; i++) {
      if ((bytes[i] & 0xc0) !== 0x80) buffer = '';
      buffer += String.fromCharCode(bytes[i]);
      if (i + 1 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80 && buffer.length < 4) continue;
      const id = strLookup(buffer);
      if (id !== -1) tokens.push(id);
      else for (let b = 0; b < buffer.length; b++) tokens.push(buffer.charCodeAt(b) + 3);
      buffer = '';
    }
    for (;;) {
      let bestScore = -1e10;
      let bestId = -1;
      let bestIndex = -1;
      for (let i = 0; i + 1 < tokens.length; i++) {
        const id = strLookup(keys[tokens[i]] + keys[tokens[i + 1]]);
        if (id !== -1 && vocab.scores[id] > bestScore) {
          bestScore = vocab.scores[id];
          bestId = id;
          bestIndex = i;
        }
      }
      if (bestIndex === -1) break;
      tokens.splice(bestIndex, 2, bestId);
    }
    return tokens;
  };
}
