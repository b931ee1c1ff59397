import { Heap } from '../heap';
import { ByteLevelBpeTokenizer } from './encoder';
import { nextPieceEnd } from './pretokenize';

export interface BpeTrainOptions {
  /** Size of the vocabulary to learn: 256 bytes + merged tokens + special tokens. */
  readonly vocabSize: number;
  /** Special tokens, given the last ids. Default `['<|endoftext|>']`; `<|endoftext|>` becomes BOS and EOS. */
  readonly specialTokens?: readonly string[];
  /** Called after each new token with (tokens learned, tokens wanted). */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Pair keys pack two ids as `left * PAIR_BASE + right`; ids stay below it. */
const PAIR_BASE = 1 << 21;

interface PairCandidate {
  readonly count: number;
  readonly left: number;
  readonly right: number;
}

/** Counts how often each GPT-2 piece of `text` occurs. */
function countPieces(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let start = 0; start < text.length; ) {
    const end = nextPieceEnd(text, start);
    const piece = text.slice(start, end);
    counts.set(piece, (counts.get(piece) ?? 0) + 1);
    start = end;
  }
  return counts;
}

/**
 * Learns a GPT-2-style byte-level BPE from `text`: pieces split by the GPT-2 pattern, then repeatedly the most
 * frequent adjacent pair (ties: smaller left id, then smaller right id) is merged into a new token. Pair counts are
 * updated incrementally from an index of the pieces each pair occurs in, so a merge only revisits those pieces.
 * The same text and options always give the same tokenizer.
 */
export function trainBpe(text: string, options: BpeTrainOptions): ByteLevelBpeTokenizer {
  const specialTexts = options.specialTokens ?? ['<|endoftext|>'];
  const { vocabSize } = options;
  const wanted = vocabSize - 256 - specialTexts.length;
  if (!Number.isInteger(vocabSize) || wanted < 0 || vocabSize >= PAIR_BASE) {
    throw new Error(
      `trainBpe: vocabSize ${vocabSize} is not possible; expected an integer from ${256 + specialTexts.length} ` +
        `(256 bytes + ${specialTexts.length} special tokens) to ${PAIR_BASE - 1}`,
    );
  }

  const tokenKeys: string[] = [];
  const idOfKey = new Map<string, number>();
  for (let byte = 0; byte < 256; byte++) {
    tokenKeys.push(String.fromCharCode(byte));
    idOfKey.set(tokenKeys[byte], byte);
  }

  const encoder = new TextEncoder();
  const pieceCounts = countPieces(text);
  const words: Int32Array[] = [];
  const wordLength: number[] = [];
  const wordCount: number[] = [];
  for (const [piece, count] of pieceCounts) {
    words.push(Int32Array.from(encoder.encode(piece)));
    wordLength.push(words[words.length - 1].length);
    wordCount.push(count);
  }

  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, number[]>();
  const addPair = (key: number, count: number, word: number): void => {
    pairCount.set(key, (pairCount.get(key) ?? 0) + count);
    const list = pairWords.get(key);
    if (list === undefined) pairWords.set(key, [word]);
    else if (list[list.length - 1] !== word) list.push(word);
  };
  words.forEach((symbols, word) => {
    for (let i = 0; i + 1 < symbols.length; i++)
      addPair(symbols[i] * PAIR_BASE + symbols[i + 1], wordCount[word], word);
  });

  const heap = new Heap<PairCandidate>(
    (x, y) =>
      x.count > y.count ||
      (x.count === y.count && (x.left < y.left || (x.left === y.left && x.right < y.right))),
  );
  const offer = (key: number): void => {
    const count = pairCount.get(key) ?? 0;
    if (count > 0) heap.push({ count, left: Math.floor(key / PAIR_BASE), right: key % PAIR_BASE });
  };
  for (const key of pairCount.keys()) offer(key);

  const merges: [number, number][] = [];
  const visited = new Int32Array(words.length);
  let learned = 0;
  while (learned < wanted) {
    const top = heap.pop();
    if (top === undefined) break;
    const { left, right } = top;
    const key = left * PAIR_BASE + right;
    if ((pairCount.get(key) ?? 0) !== top.count) continue;

    const mergedKey = tokenKeys[left] + tokenKeys[right];
    let merged = idOfKey.get(mergedKey);
    if (merged === undefined) {
      merged = tokenKeys.length;
      tokenKeys.push(mergedKey);
      idOfKey.set(mergedKey, merged);
      learned++;
    }
    merges.push([left, right]);

    const changed = new Set<number>();
    const stamp = merges.length;
    for (const word of pairWords.get(key) ?? []) {
      if (visited[word] === stamp) continue;
      visited[word] = stamp;
      const symbols = words[word];
      const length = wordLength[word];
      let found = false;
      for (let i = 0; i + 1 < length; i++) {
        if (symbols[i] === left && symbols[i + 1] === right) {
          found = true;
          break;
        }
      }
      if (!found) continue;
      const count = wordCount[word];
      for (let i = 0; i + 1 < length; i++) {
        const old = symbols[i] * PAIR_BASE + symbols[i + 1];
        pairCount.set(old, pairCount.get(old)! - count);
        changed.add(old);
      }
      let write = 0;
      for (let read = 0; read < length; ) {
        if (read + 1 < length && symbols[read] === left && symbols[read + 1] === right) {
          symbols[write++] = merged;
          read += 2;
        } else {
          symbols[write++] = symbols[read++];
        }
      }
      wordLength[word] = write;
      for (let i = 0; i + 1 < write; i++) {
        const pair = symbols[i] * PAIR_BASE + symbols[i + 1];
        if (symbols[i] === merged || symbols[i + 1] === merged) addPair(pair, count, word);
        else pairCount.set(pair, pairCount.get(pair)! + count);
        changed.add(pair);
      }
    }
    pairWords.delete(key);
    for (const pair of changed) {
      if (pairCount.get(pair) === 0) {
        pairCount.delete(pair);
        pairWords.delete(pair);
      } else {
        offer(pair);
      }
    }
    options.onProgress?.(learned, wanted);
  }

  const tokens = tokenKeys.map((key) => Uint8Array.from(key, (char) => char.charCodeAt(0)));
  const specialTokens = specialTexts.map((specialText, index) => ({
    text: specialText,
    id: tokens.length + index,
  }));
  const endOfText = specialTokens.find((token) => token.text === '<|endoftext|>')?.id;
  return new ByteLevelBpeTokenizer({
    tokens,
    merging: { kind: 'merges', merges },
    specialTokens,
    bos: endOfText,
    eos: endOfText,
    source: 'trainBpe',
  });
}
