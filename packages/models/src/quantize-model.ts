import { Embedding, Linear, type Module } from '@loom/nn';
import { QUANT_BLOCK, QuantizedWeight, type QuantType, quantFormat, tensor } from '@loom/tensor';
import { type QuantizedType, quantize } from './gguf/quantize';
import { type NamedQuantizedTensor, repackGgufBlocks } from './gguf/quantized';

/** A layer a compact weight may serve: a Linear's products, an Embedding's lookups (and a tied output projection). */
export type CompactLayer = Linear | Embedding;

/** Every Linear and Embedding of `model` by the name of its weight parameter (`layers.0.attention.wq.weight`). */
export function compactLayersByWeightName(model: Module): Map<string, CompactLayer> {
  const names = new Map(model.namedParameters().map(([name, t]) => [t, name]));
  const layers = new Map<string, CompactLayer>();
  for (const m of model.modules()) {
    if (!(m instanceof Linear || m instanceof Embedding)) continue;
    const name = names.get(m.weight);
    if (name !== undefined) layers.set(name, m);
  }
  return layers;
}

/** Every Linear of `model` by the name of its weight parameter. */
export function linearsByWeightName(model: Module): Map<string, Linear> {
  const linears = new Map<string, Linear>();
  for (const [name, layer] of compactLayersByWeightName(model))
    if (layer instanceof Linear) linears.set(name, layer);
  return linears;
}

/** The layer of `layers` whose weight is named `name`; throws, naming the compact tensor (`kind`) and `source`, if none. */
export function compactLayer(
  layers: ReadonlyMap<string, CompactLayer>,
  name: string,
  kind: string,
  source: string,
): CompactLayer {
  const layer = layers.get(name);
  if (layer === undefined) {
    throw new Error(`${source}: ${kind} tensor ${name} is not the weight of a linear layer or an embedding`);
  }
  return layer;
}

/**
 * Hands each quantized weight to the Linear or Embedding whose weight parameter has its name, uploaded to the model's
 * backend; `source` names the weights in errors.
 */
export function useQuantizedWeights(
  model: Module,
  quantized: readonly NamedQuantizedTensor[],
  source: string,
): void {
  if (quantized.length === 0) return;
  const layers = compactLayersByWeightName(model);
  for (const q of quantized) {
    const layer = compactLayer(layers, q.name, 'quantized', source);
    const [out] = q.shape;
    const scales = tensor(q.scales, [out, q.scales.length / out], { backend: model.backend }); // [out, blocks · perBlock]
    const quants = tensor(q.quants, [out, q.quants.length / out], { backend: model.backend, dtype: 'i32' }); // [out, words]
    layer.useQuantized(new QuantizedWeight(q.type, scales, quants));
  }
}

/** GGUF's name of each type. */
const GGUF_TYPE: Readonly<Record<QuantType, QuantizedType>> = {
  q8_0: 'Q8_0',
  q4_0: 'Q4_0',
  q4_k: 'Q4_K',
  q6_k: 'Q6_K',
};

/**
 * The weight of every Linear of `model` whose input size is a multiple of 32, quantized to `type` as llama.cpp's
 * reference quantizer writes the blocks, under its weight's name: for `useQuantizedWeights`. A Q4_K layer whose input
 * size is not a multiple of 256 falls back to Q4_0, as `loom quantize` does.
 */
export async function quantizedLinearWeights(
  model: Module,
  type: QuantType,
): Promise<NamedQuantizedTensor[]> {
  const quantized: NamedQuantizedTensor[] = [];
  for (const [name, linear] of linearsByWeightName(model)) {
    if (linear.inFeatures % QUANT_BLOCK !== 0) continue;
    const own = linear.inFeatures % quantFormat(type).values === 0 ? type : 'q4_0';
    const values = await linear.weight.float32Data();
    const shape: [number, number] = [linear.outFeatures, linear.inFeatures];
    quantized.push(repackGgufBlocks(name, own, shape, quantize(values, GGUF_TYPE[own])));
  }
  return quantized;
}

/**
 * Quantizes the Linears of `model` to `type` in place (see quantizedLinearWeights), so their products read the
 * blocks; the f32 weights stay the parameters. Returns the number of layers quantized. For inference: the
 * products then have no weight gradient.
 */
export async function quantizeLinears(model: Module, type: QuantType): Promise<number> {
  const quantized = await quantizedLinearWeights(model, type);
  useQuantizedWeights(model, quantized, 'quantizeLinears');
  return quantized.length;
}
