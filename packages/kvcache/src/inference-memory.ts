import { type HeadShape, headDimOf } from './head-dim';
import { kvCacheBytes } from './kv-cache-bytes';

/** The fields of a model config the estimate reads (a `TransformerConfig` or `ModelConfig` has them). */
export interface InferenceModelShape extends HeadShape {
  readonly preset: 'llama' | 'gpt2';
  readonly vocabSize: number;
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly hiddenDim: number;
  /** Sliding-window attention: a ring cache keeps only this many positions (absent: the whole context). */
  readonly slidingWindow?: number;
}

export interface InferenceMemoryOptions {
  readonly batch: number;
  /** Positions per sequence: the prompt plus the generated tokens. */
  readonly seqLen: number;
  /** Number of weights (`parameterCount` of `@loom/nn`). */
  readonly parameters: number;
  /** Bytes per weight (4 float32, 2 float16). */
  readonly weightBytes: number;
  /** Bytes per cached key or value element (default: weightBytes). */
  readonly kvBytes?: number;
  /** Bytes per activation element (default: weightBytes). */
  readonly activationBytes?: number;
}

/** Bytes of memory inference needs, by part. */
export interface InferenceMemory {
  readonly weights: number;
  readonly kvCache: number;
  /** Peak temporaries of one forward pass over the whole prompt of every sequence. */
  readonly activations: number;
  readonly total: number;
}

/**
 * Estimates inference memory: the weights, the key/value cache for `seqLen` positions of every sequence (at most
 * the model's sliding window: a ring cache holds no more), and the
 * activations of prefilling all of them in one pass — per token the residual stream, the norm output, q and the
 * attention output, the block output (5 × dim), the new keys and values (2 × numKvHeads × headDim) and the
 * feed-forward's hidden values (3 × hiddenDim for llama's SwiGLU, 2 for gpt2), plus one row of logits per
 * sequence (only the last position is projected). Fused attention never materialises the score matrix.
 */
/** Positions a KV cache holds for a sequence of `seqLen`: all of them, or the sliding window's ring of slots. */
export function kvPositions(model: InferenceModelShape, seqLen: number): number {
  return model.slidingWindow === undefined ? seqLen : Math.min(seqLen, model.slidingWindow);
}

export function inferenceMemory(
  model: InferenceModelShape,
  options: InferenceMemoryOptions,
): InferenceMemory {
  const { batch, seqLen, parameters, weightBytes } = options;
  const kvBytes = options.kvBytes ?? weightBytes;
  const activationBytes = options.activationBytes ?? weightBytes;
  const headDim = headDimOf(model);
  const kvCache = kvCacheBytes({
    batch,
    seqLen: kvPositions(model, seqLen),
    layers: model.numLayers,
    kvHeads: model.numKvHeads,
    headDim,
    bytesPerElement: kvBytes,
  });
  const ffnValues = model.preset === 'llama' ? 3 : 2;
  const perToken = 5 * model.dim + 2 * model.numKvHeads * headDim + ffnValues * model.hiddenDim;
  const activations = activationBytes * (batch * seqLen * perToken + batch * model.vocabSize);
  const weights = parameters * weightBytes;
  return { weights, kvCache, activations, total: weights + kvCache + activations };
}
