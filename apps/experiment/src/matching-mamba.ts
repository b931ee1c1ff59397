import { type MambaConfig, makeMambaConfig, mambaParameterCount } from '@loom/nn';

/**
 * The Mamba of width `dim` over `vocabSize` tokens whose parameter count is closest to `target`, of depth 1 to
 * `maxDepth` (the shallower on a tie): the Mamba an experiment compares with a transformer of `target` weights.
 */
export function matchingMamba(vocabSize: number, dim: number, target: number, maxDepth: number): MambaConfig {
  const configOf = (numLayers: number) => makeMambaConfig({ vocabSize, dim, numLayers });
  let best = configOf(1);
  for (let depth = 2; depth <= maxDepth; depth++) {
    const config = configOf(depth);
    const gap = (c: MambaConfig) => Math.abs(mambaParameterCount(c) - target);
    if (gap(config) < gap(best)) best = config;
  }
  return best;
}
