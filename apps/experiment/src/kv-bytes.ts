import { kvCacheBytes } from '@loom/kvcache';
import { headDim, type TransformerConfig } from '@loom/nn';

/** Bytes of float32 keys and values of every layer of `config` for `positions` positions of one sequence. */
export function kvBytes(config: TransformerConfig, positions: number): number {
  return kvCacheBytes({
    batch: 1,
    seqLen: positions,
    layers: config.numLayers,
    kvHeads: config.numKvHeads,
    headDim: headDim(config),
    bytesPerElement: 4,
  });
}
