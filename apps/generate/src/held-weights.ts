import {
  isLinearWeight,
  type LoadedModel,
  type transformerFromTensors,
  type WeightsMode,
} from '@loom/models';
import { bytesPerElement, QuantizedWeight, type QuantType, type Tensor } from '@loom/tensor';

/** How a loaded model holds its weights, as `generate`, `chat`, `perplexity` and `serve` report it. */
export interface HeldWeights {
  /** --weights as given. */
  readonly mode: WeightsMode;
  /** The model's linear layers, a tied output projection (which reads the embedding) included. */
  readonly layers: number;
  /** Of those, the ones whose products read quantized blocks, by type (none: every layer reads its f32 weight). */
  readonly blocks: Partial<Record<QuantType, number>>;
  /** Bytes of backend storage the weights take: the parameters kept, and the blocks. */
  readonly bytes: number;
}

/**
 * What `model`, built from `loaded` with `mode`, reads. A linear layer is known by its `quantized` slot (only
 * `Linear` of `@loom/nn` has one); released parameters (a quantized layer's f32 weight) count no bytes. A tied
 * model's output projection reads the embedding's blocks when `loaded` kept them (a quantized weight that is no
 * linear layer's), beside the f32 embedding the lookups read.
 */
export function heldWeights(
  model: ReturnType<typeof transformerFromTensors>,
  loaded: Pick<LoadedModel, 'quantized'>,
  mode: WeightsMode,
): HeldWeights {
  const blocks: Partial<Record<QuantType, number>> = {};
  const count = (type: QuantType) => {
    blocks[type] = (blocks[type] ?? 0) + 1;
  };
  let layers = model.output === undefined ? 1 : 0;
  let bytes = 0;
  for (const m of model.modules()) {
    if (!('quantized' in m)) continue;
    layers++;
    if (!(m.quantized instanceof QuantizedWeight)) continue;
    count(m.quantized.type);
    bytes += m.quantized.bytes;
  }
  for (const tied of (loaded.quantized ?? []).filter((q) => !isLinearWeight(q.name))) {
    count(tied.type);
    bytes += tied.scales.byteLength + tied.quants.byteLength;
  }
  const params = new Set<Tensor>(model.namedParameters().map(([, t]) => t)); // a tied weight once
  for (const t of params) if (!t.isDisposed) bytes += t.size * bytesPerElement(t.dtype);
  return { mode, layers, blocks, bytes };
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
