import type { transformerFromTensors, WeightsMode } from '@loom/models';
import { QuantizedWeight, type QuantType } from '@loom/tensor';

/** How a loaded model holds its weights, as `generate`, `chat`, `perplexity` and `serve` report it. */
export interface HeldWeights {
  /** --weights as given. */
  readonly mode: WeightsMode;
  /** The model's linear layers, a tied output projection (which reads the embedding's table) included. */
  readonly layers: number;
  /** Of those, the ones whose products read quantized blocks, by type (none: every layer reads its f32 weight). */
  readonly blocks: Partial<Record<QuantType, number>>;
  /** Bytes of backend storage the weights take: the parameters kept, and the compact copies (`weightBytes`). */
  readonly bytes: number;
}

/**
 * What `model`, built with `mode`, reads. A linear layer is known by its `quantized` slot (an embedding has one too:
 * its lookups may decode a compact table, which a tied output projection then reads as its product).
 */
export function heldWeights(
  model: ReturnType<typeof transformerFromTensors>,
  mode: WeightsMode,
): HeldWeights {
  const blocks: Partial<Record<QuantType, number>> = {};
  const count = (weight: unknown) => {
    if (weight instanceof QuantizedWeight) blocks[weight.type] = (blocks[weight.type] ?? 0) + 1;
  };
  const embeddings = new Set<unknown>([model.tokEmbeddings, model.posEmbeddings]);
  let layers = 0;
  for (const m of model.modules()) {
    if (!('quantized' in m) || embeddings.has(m)) continue;
    layers++;
    count(m.quantized);
  }
  if (model.output === undefined) {
    layers++;
    count(model.tokEmbeddings.quantized);
  }
  return { mode, layers, blocks, bytes: model.weightBytes };
}

/** Bytes in MiB with one decimal, or KiB below 1 MiB. */
function mebibytes(bytes: number): string {
  return bytes < 2 ** 20 ? `${(bytes / 2 ** 10).toFixed(1)} KiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * One phrase for a summary line: `weights quantized: 30 q8_0 of 36 linear layers read blocks, 1.2 MiB`, or
 * `weights f32: no linear layer reads blocks, 4.3 MiB`.
 */
export function describeHeldWeights(held: HeldWeights): string {
  const types = Object.entries(held.blocks).map(([type, count]) => `${count} ${type}`);
  const read =
    types.length === 0
      ? 'no linear layer reads blocks'
      : `${types.join(' + ')} of ${held.layers} linear layers read blocks`;
  return `weights ${held.mode}: ${read}, ${mebibytes(held.bytes)}`;
}
