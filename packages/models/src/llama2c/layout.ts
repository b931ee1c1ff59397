import { sizeOf } from '@loom/tensor';
import type { ModelConfig } from '../config';

/** The 7 int32 values at the start of a llama2.c `.bin`. */
export interface Llama2cHeader {
  dim: number;
  hiddenDim: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  /** Negative when an untied classifier (wcls) follows the other tensors. */
  vocabSize: number;
  seqLen: number;
}

export const LLAMA2C_HEADER_BYTES = 7 * 4;

/** The magic number ("ak42") that begins llama2.c's newer, versioned exports. */
export const LLAMA2C_VERSIONED_MAGIC = 0x616b3432;

/** llama2.c's legacy format stores neither; run.c hard-codes them. */
export const LLAMA2C_NORM_EPS = 1e-5;
export const LLAMA2C_ROPE_THETA = 10000;

/**
 * One stretch of float32 values in file order: a tensor stacked over the layers (one Loom name per layer) or a
 * single tensor, or the legacy RoPE table that readers skip.
 */
export type Llama2cSegment =
  | { readonly kind: 'tensor'; readonly names: readonly string[]; readonly shape: readonly number[] }
  | { readonly kind: 'rope-table'; readonly part: 'cos' | 'sin'; readonly shape: readonly number[] };

export function headerToConfig(header: Llama2cHeader): ModelConfig {
  return {
    preset: 'llama',
    vocabSize: Math.abs(header.vocabSize),
    dim: header.dim,
    numLayers: header.numLayers,
    numHeads: header.numHeads,
    numKvHeads: header.numKvHeads,
    hiddenDim: header.hiddenDim,
    maxSeqLen: header.seqLen,
    normEps: LLAMA2C_NORM_EPS,
    ropeTheta: LLAMA2C_ROPE_THETA,
    tiedEmbeddings: header.vocabSize > 0,
    bias: false,
  };
}

export function describeHeader(header: Llama2cHeader): string {
  return `dim=${header.dim} hidden=${header.hiddenDim} layers=${header.numLayers} heads=${header.numHeads} kvHeads=${header.numKvHeads} vocab=${header.vocabSize} seqLen=${header.seqLen}`;
}

/**
 * The tensors of a legacy (version 0) llama2.c export in file order, as `export.py` writes and `run.c` reads them:
 * token embeddings, then each per-layer tensor stacked over all layers (attention norms, wq, wk, wv, wo, ffn norms,
 * w1, w2, w3), the final norm, the cos and sin RoPE tables [seqLen, headDim/2], and the classifier when untied.
 */
export function llama2cLayout(config: ModelConfig): Llama2cSegment[] {
  const { dim, hiddenDim, vocabSize } = config;
  const headSize = dim / config.numHeads;
  const kvDim = config.numKvHeads * headSize;
  const layers = Array.from({ length: config.numLayers }, (_, layer) => `layers.${layer}`);
  const stacked = (suffix: string, shape: number[]): Llama2cSegment => ({
    kind: 'tensor',
    names: layers.map((prefix) => `${prefix}.${suffix}`),
    shape,
  });
  const segments: Llama2cSegment[] = [
    { kind: 'tensor', names: ['tok_embeddings.weight'], shape: [vocabSize, dim] },
    stacked('attention_norm.weight', [dim]),
    stacked('attention.wq.weight', [dim, dim]),
    stacked('attention.wk.weight', [kvDim, dim]),
    stacked('attention.wv.weight', [kvDim, dim]),
    stacked('attention.wo.weight', [dim, dim]),
    stacked('ffn_norm.weight', [dim]),
    stacked('feed_forward.w1.weight', [hiddenDim, dim]),
    stacked('feed_forward.w2.weight', [dim, hiddenDim]),
    stacked('feed_forward.w3.weight', [hiddenDim, dim]),
    { kind: 'tensor', names: ['norm.weight'], shape: [dim] },
    { kind: 'rope-table', part: 'cos', shape: [config.maxSeqLen, headSize / 2] },
    { kind: 'rope-table', part: 'sin', shape: [config.maxSeqLen, headSize / 2] },
  ];
  if (!config.tiedEmbeddings)
    segments.push({ kind: 'tensor', names: ['output.weight'], shape: [vocabSize, dim] });
  return segments;
}

/** Number of float32 values in the file after the header. */
export function llama2cFloatCount(segments: readonly Llama2cSegment[]): number {
  let count = 0;
  for (const segment of segments) {
    const size = sizeOf(segment.shape);
    count += segment.kind === 'tensor' ? size * segment.names.length : size;
  }
  return count;
}
