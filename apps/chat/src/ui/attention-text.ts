import type { AttentionMap } from '../protocol';

/** The most characters of a token shown on an axis. */
const LABEL_CHARS = 12;

/** A token as an axis label: spaces, tabs and newlines made visible, long ones cut. */
export function tokenLabel(text: string): string {
  const visible = text.replace(/ /g, '·').replace(/\t/g, '⇥').replace(/\r?\n/g, '↵');
  return visible.length > LABEL_CHARS ? `${visible.slice(0, LABEL_CHARS - 1)}…` : visible;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

/**
 * The heatmap in words, for screen readers: what the rows and columns are, the causal shape, and where a token's
 * attention goes on average (the first token, itself, the token before it).
 */
export function describeAttention(map: AttentionMap): string {
  const n = map.tokens.length;
  const p = (row: number, column: number) => map.probs[row * n + column];
  let first = 0;
  let self = 0;
  let previous = 0;
  for (let i = 0; i < n; i++) {
    first += p(i, 0);
    self += p(i, i);
    if (i > 0) previous += p(i, i - 1);
  }
  const averages =
    n > 1
      ? ` On average a token gives ${percent(first / n)} of its attention to the first token, ${percent(self / n)} ` +
        `to itself and ${percent(previous / (n - 1))} to the token before it.`
      : '';
  return (
    `Attention heatmap of layer ${map.layer}, head ${map.head}, over ${n} tokens: row i shows how much token i ` +
    `attends to each token up to it (columns); above the diagonal it is empty, as attention is causal.${averages}`
  );
}
