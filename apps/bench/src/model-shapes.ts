import { makeConfig, type TransformerConfig } from '@loom/nn';

/** stories260K's shape (llama2.c): dim 64, hidden 172, 5 layers of 8 heads over 4 kv heads, vocab 512. */
export function stories260KShape(): TransformerConfig {
  return makeConfig('llama', {
    vocabSize: 512,
    dim: 64,
    hiddenDim: 172,
    numLayers: 5,
    numHeads: 8,
    numKvHeads: 4,
    maxSeqLen: 512,
    tiedEmbeddings: true,
  });
}

/** stories15M's shape (llama2.c): dim 288, hidden 768, 6 layers of 6 heads, vocab 32000. */
export function stories15MShape(maxSeqLen = 256): TransformerConfig {
  return makeConfig('llama', {
    vocabSize: 32000,
    dim: 288,
    hiddenDim: 768,
    numLayers: 6,
    numHeads: 6,
    maxSeqLen,
    tiedEmbeddings: true,
  });
}

/** stories110M's shape (llama2.c): dim 768, hidden 2048, 12 layers of 12 heads, vocab 32000. */
export function stories110MShape(maxSeqLen = 1024): TransformerConfig {
  return makeConfig('llama', {
    vocabSize: 32000,
    dim: 768,
    hiddenDim: 2048,
    numLayers: 12,
    numHeads: 12,
    maxSeqLen,
    tiedEmbeddings: true,
  });
}
