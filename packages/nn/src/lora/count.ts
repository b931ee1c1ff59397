import type { TransformerConfig } from '../config';
import { checkLoraTargets, loraTargetShapes } from './targets';

/** Trainable values of rank-`rank` adapters on `targets`: r·(in + out) per module per layer. */
export function loraParameterCount(
  config: TransformerConfig,
  rank: number,
  targets: readonly string[],
): number {
  const chosen = checkLoraTargets(config.preset, targets);
  const perLayer = chosen
    .flatMap((t) => loraTargetShapes(config, t))
    .reduce((n, s) => n + rank * (s.in + s.out), 0);
  return config.numLayers * perLayer;
}
