import { headDim, qDim, qkvHasBias, type TransformerConfig } from './config';

/** Number of parameters of a model with this config (with `moe`, every expert's). */
export function parameterCount(c: TransformerConfig): number {
  return countParameters(c, c.moe?.experts ?? 1);
}

/**
 * Parameters one token passes through: with `moe`, the router and `topK` of the experts (Mixtral 8x7B: about 13B of
 * 47B); without, the same as `parameterCount`.
 */
export function activeParameterCount(c: TransformerConfig): number {
  return countParameters(c, c.moe?.topK ?? 1);
}

/** Parameters with `experts` feed-forwards per block (plus the router when the config has `moe`). */
function countParameters(c: TransformerConfig, experts: number): number {
  const hd = headDim(c);
  const normParams = c.bias ? 2 * c.dim : c.dim;
  const linear = (i: number, o: number) => i * o + (c.bias ? o : 0);
  const projection = (o: number) => c.dim * o + (qkvHasBias(c) ? o : 0);
  const attention =
    projection(qDim(c)) +
    2 * projection(c.numKvHeads * hd) +
    linear(qDim(c), c.dim) +
    (c.qkNorm ? 2 * hd : 0);
  const ffn =
    c.preset === 'llama'
      ? 2 * linear(c.dim, c.hiddenDim) + linear(c.hiddenDim, c.dim)
      : linear(c.dim, c.hiddenDim) + linear(c.hiddenDim, c.dim);
  const router = c.moe ? c.dim * c.moe.experts : 0;
  const block = attention + experts * ffn + router + 2 * normParams;
  const embeddings = c.vocabSize * c.dim + (c.preset === 'gpt2' ? c.maxSeqLen * c.dim : 0);
  const output = c.tiedEmbeddings ? 0 : c.vocabSize * c.dim;
  return embeddings + c.numLayers * block + normParams + output;
}

/** Bytes of a training run's memory, by part (float32 everywhere). */
export interface MemoryEstimate {
  readonly weights: number;
  readonly gradients: number;
  /** AdamW's two moments. */
  readonly optimizer: number;
  /** Activations kept for the backward pass of one batch. */
  readonly activations: number;
  readonly total: number;
}

/**
 * Estimates training memory for a batch of `batch` sequences of `seqLen` tokens. Activations
 * count what the backward pass reads per layer: the block input, the norm outputs, q, k, v,
 * the attention output, the attention probabilities (heads·T² per sequence), the
 * feed-forward's hidden values (two or three of hiddenDim), plus the logits and their softmax.
 */
export function memoryEstimate(c: TransformerConfig, batch: number, seqLen: number): MemoryEstimate {
  const bytes = 4;
  const params = parameterCount(c);
  const tokens = batch * seqLen;
  const hd = headDim(c);
  const perToken =
    4 * c.dim +
    c.numHeads * hd +
    2 * c.numKvHeads * hd +
    (c.preset === 'llama' ? 3 : 2) * c.hiddenDim * (c.moe?.topK ?? 1) +
    c.dim;
  const attentionProbs = batch * c.numHeads * seqLen * seqLen;
  const activations =
    bytes * (c.numLayers * (tokens * perToken + 2 * attentionProbs) + 2 * tokens * c.vocabSize);
  const weights = bytes * params;
  const gradients = weights;
  const optimizer = 2 * weights;
  return { weights, gradients, optimizer, activations, total: weights + gradients + optimizer + activations };
}
