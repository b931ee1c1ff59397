/** Which keys each query may see, before a sliding window and key lengths narrow it further. */
export type AttentionMask =
  /** Bidirectional: every key (encoders, cross-attention). */
  | { readonly kind: 'none' }
  /** The query at position p sees keys s <= p. */
  | { readonly kind: 'causal' }
  /** Prefix LM: every query sees the keys s < length (bidirectional prefix), and keys s <= p after it. */
  | { readonly kind: 'prefix'; readonly length: number };

/** Options of scaled dot-product attention, every field resolved (what kernels receive). */
export interface AttentionSpec {
  readonly mask: AttentionMask;
  /** Position of the first query among the keys (keys already in a cache): query t is at position offset + t. */
  readonly offset: number;
  /** Sliding window W: the query at position p sees only keys s > p - W; 0 for no window. */
  readonly window: number;
  /** Valid keys per batch row (right padding): row b sees only keys s < keyLengths[b]; empty when all S are valid. */
  readonly keyLengths: readonly number[];
  /** Multiplier of the scores, usually 1/sqrt(headDim). */
  readonly scale: number;
}

/** The keys [start, end) query `step` of batch row `batch` sees among `keys`; empty when start >= end. */
export function visibleKeys(
  spec: AttentionSpec,
  batch: number,
  step: number,
  keys: number,
): { start: number; end: number } {
  const position = spec.offset + step;
  const { mask } = spec;
  const upper =
    mask.kind === 'none' ? keys : mask.kind === 'causal' ? position + 1 : Math.max(position + 1, mask.length);
  const end = Math.min(upper, keys, spec.keyLengths[batch] ?? keys);
  const start = spec.window > 0 ? Math.max(0, position - spec.window + 1) : 0;
  return { start, end };
}
