/** What the size of a key/value cache depends on. */
export interface KVCacheSize {
  readonly batch: number;
  /** Positions cached per sequence. */
  readonly seqLen: number;
  readonly layers: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** 4 for float32, 2 for float16 or bfloat16, 1 for 8-bit. */
  readonly bytesPerElement: number;
}

/** Bytes of a key/value cache: batch × seqLen × layers × 2 (keys and values) × kvHeads × headDim × bytesPerElement. */
export function kvCacheBytes(size: KVCacheSize): number {
  for (const [name, value] of Object.entries(size)) {
    if (!(Number.isFinite(value) && value >= 0)) {
      throw new Error(`kvCacheBytes: ${name} must be a non-negative number, got ${value}`);
    }
  }
  const { batch, seqLen, layers, kvHeads, headDim, bytesPerElement } = size;
  return batch * seqLen * layers * 2 * kvHeads * headDim * bytesPerElement;
}
