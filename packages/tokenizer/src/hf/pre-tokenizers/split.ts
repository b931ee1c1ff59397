/** What happens to the delimiters (the matches) when a piece is split, as in the Rust `tokenizers` crate. */
export type SplitBehavior = 'Removed' | 'Isolated' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

export const SPLIT_BEHAVIORS = [
  'Removed',
  'Isolated',
  'MergedWithPrevious',
  'MergedWithNext',
  'Contiguous',
] as const satisfies readonly SplitBehavior[];

/** A stretch of a piece: `[start, end)` and whether it is a delimiter. */
interface Part {
  start: number;
  end: number;
  readonly delimiter: boolean;
}

/** The piece cut into alternating stretches at each match of `pattern` (a global RegExp); `invert` swaps roles. */
function parts(text: string, pattern: RegExp, invert: boolean): Part[] {
  const out: Part[] = [];
  let previous = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index;
    if (start > previous) out.push({ start: previous, end: start, delimiter: invert });
    out.push({ start, end: start + match[0].length, delimiter: !invert });
    previous = start + match[0].length;
  }
  if (previous < text.length) out.push({ start: previous, end: text.length, delimiter: invert });
  return out;
}

/**
 * Joins stretches: a delimiter joins the stretch before it (`MergedWithPrevious`) or after it
 * (`MergedWithNext`) unless that one is a delimiter too; `Contiguous` joins runs of the same kind.
 */
function merge(all: readonly Part[], behavior: SplitBehavior): Part[] {
  switch (behavior) {
    case 'Isolated':
      return [...all];
    case 'Removed':
      return all.filter((part) => !part.delimiter);
    case 'MergedWithPrevious':
    case 'Contiguous': {
      const out: Part[] = [];
      let previousDelimiter = false;
      for (const part of all) {
        const last = out[out.length - 1];
        const join =
          behavior === 'Contiguous'
            ? part.delimiter === previousDelimiter
            : part.delimiter && !previousDelimiter;
        if (join && last !== undefined) last.end = part.end;
        else out.push({ ...part });
        previousDelimiter = part.delimiter;
      }
      return out;
    }
    case 'MergedWithNext': {
      const out: Part[] = [];
      let nextDelimiter = false;
      for (let i = all.length - 1; i >= 0; i--) {
        const part = all[i];
        const last = out[out.length - 1];
        if (part.delimiter && !nextDelimiter && last !== undefined) last.start = part.start;
        else out.push({ ...part });
        nextDelimiter = part.delimiter;
      }
      return out.reverse();
    }
  }
}

/** Splits `text` at the matches of `pattern` (a global RegExp), treating them as `behavior` says; no empty pieces. */
export function splitPiece(text: string, pattern: RegExp, behavior: SplitBehavior, invert = false): string[] {
  const pieces: string[] = [];
  for (const part of merge(parts(text, pattern, invert), behavior)) {
    if (part.end > part.start) pieces.push(text.slice(part.start, part.end));
  }
  return pieces;
}
