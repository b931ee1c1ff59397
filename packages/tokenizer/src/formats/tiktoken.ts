import { ByteLevelBpeTokenizer } from '../bpe/encoder';
import type { SpecialToken } from '../special-token';
import { base64Decode } from './base64';

export interface TiktokenOptions {
  /** Names the file in error messages. Default `'tiktoken file'`. */
  readonly source?: string;
  /**
   * Special tokens, which tiktoken files do not list. Default: `<|endoftext|>` with the id after the last rank
   * (50256 for GPT-2's r50k_base), used as both BOS and EOS.
   */
  readonly specialTokens?: readonly SpecialToken[];
  readonly bos?: number;
  readonly eos?: number;
}

/** Loads a tiktoken rank file (one `base64(bytes) rank` per line, ranks 0..n-1) as a GPT-2-style BPE tokenizer. */
export function tokenizerFromTiktoken(text: string, options: TiktokenOptions = {}): ByteLevelBpeTokenizer {
  const source = options.source ?? 'tiktoken file';
  const lines = text.split('\n');
  const tokens: Uint8Array[] = [];
  const lineOfRank: number[] = [];
  lines.forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '' && index === lines.length - 1) return;
    const lineNumber = index + 1;
    const space = line.indexOf(' ');
    const rankText = line.slice(space + 1);
    const bytes = space > 0 ? base64Decode(line.slice(0, space)) : undefined;
    if (bytes === undefined || bytes.length === 0 || !/^\d+$/.test(rankText)) {
      const shown = line.length > 60 ? `${line.slice(0, 57)}...` : line;
      throw new Error(
        `${source} line ${lineNumber}: expected "<base64> <rank>", got ${JSON.stringify(shown)}`,
      );
    }
    const rank = Number(rankText);
    if (rank >= lines.length) {
      throw new Error(
        `${source} line ${lineNumber}: rank ${rank} is beyond the ${lines.length} lines of the file; ranks must run from 0 without gaps`,
      );
    }
    if (tokens[rank] !== undefined) {
      throw new Error(
        `${source} line ${lineNumber}: rank ${rank} was already given on line ${lineOfRank[rank]}; each rank must appear once`,
      );
    }
    tokens[rank] = bytes;
    lineOfRank[rank] = lineNumber;
  });
  for (let rank = 0; rank < tokens.length; rank++) {
    if (tokens[rank] === undefined) {
      throw new Error(
        `${source}: rank ${rank} is missing (ranks go up to ${tokens.length - 1}); ranks must run from 0 without gaps`,
      );
    }
  }
  const endOfText = tokens.length;
  const specialTokens = options.specialTokens ?? [{ text: '<|endoftext|>', id: endOfText }];
  const useDefault = options.specialTokens === undefined;
  return new ByteLevelBpeTokenizer({
    tokens,
    merging: { kind: 'ranks' },
    specialTokens,
    bos: options.bos ?? (useDefault ? endOfText : undefined),
    eos: options.eos ?? (useDefault ? endOfText : undefined),
    source,
  });
}
