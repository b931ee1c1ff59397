import { escapeRegExp } from '../regex';
import { splitPiece } from './split';

/** When Metaspace puts its replacement character before a piece. */
export type PrependScheme = 'always' | 'first' | 'never';

export interface MetaspaceOptions {
  /** The character that stands for a space (`▁`). */
  readonly replacement: string;
  readonly prependScheme: PrependScheme;
  /** Split before each replacement character. */
  readonly split: boolean;
}

/** A Metaspace step: spaces become the replacement, which is prepended as the scheme says, then split before it. */
export function metaspaceSplitter(options: MetaspaceOptions): (piece: string, first: boolean) => string[] {
  const { replacement, prependScheme, split } = options;
  const pattern = new RegExp(escapeRegExp(replacement), 'gu');
  return (piece, first) => {
    let text = piece.replaceAll(' ', replacement);
    const prepend = prependScheme === 'always' || (prependScheme === 'first' && first);
    if (prepend && !text.startsWith(replacement)) text = replacement + text;
    return split ? splitPiece(text, pattern, 'MergedWithNext') : [text];
  };
}
