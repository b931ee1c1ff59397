/** One generated target sequence. */
export interface Hypothesis {
  /** The generated tokens, without BOS or the final EOS. */
  readonly tokens: readonly number[];
  /** Sum of the log-probabilities of every generated token, the EOS included when it was generated. */
  readonly logProb: number;
  /** Whether generation ended with EOS (false: it stopped at maxLength). */
  readonly ended: boolean;
}

/** Log-softmax in float64 of each of `rows` rows of width `width` in data -> one Float64Array per row. */
export function logSoftmaxRows(data: ArrayLike<number>, rows: number, width: number): Float64Array[] {
  return Array.from({ length: rows }, (_, r) => {
    const out = new Float64Array(width);
    let max = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < width; j++) max = Math.max(max, data[r * width + j]);
    let sum = 0;
    for (let j = 0; j < width; j++) sum += Math.exp(data[r * width + j] - max);
    const logSum = max + Math.log(sum);
    for (let j = 0; j < width; j++) out[j] = data[r * width + j] - logSum;
    return out;
  });
}

/** Checks a generation's length bound against the decoder's positions: at most maxLength steps. */
export function checkMaxLength(caller: string, maxLength: number, maxSeqLen: number): void {
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > maxSeqLen) {
    throw new Error(
      `${caller}: maxLength must be an integer in [1, ${maxSeqLen}] (the decoder reads BOS + maxLength - 1 tokens, maxSeqLen ${maxSeqLen}), got ${maxLength}`,
    );
  }
}
