import { Linear, type Module } from '@loom/nn';
import { QUANT_BLOCK, QuantizedWeight, type QuantType, tensor } from '@loom/tensor';
import { quantize } from './gguf/quantize';
import { type NamedQuantizedTensor, repackGgufBlocks } from './gguf/quantized';

/** Every Linear of `model` by the name of its weight parameter (`layers.0.attention.wq.weight`). */
function linearsByWeightName(model: Module): Map<string, Linear> {
  const names = new Map(model.namedParameters().map(([name, t]) => [t, name]));
  const linears = new Map<string, Linear>();
  for (const m of model.modules()) {
    const name = m instanceof Linear ? names.get(m.weight) : undefined;
    if (m instanceof Linear && name !== undefined) linears.set(name, m);
  }
  return linears;
}

/**
 * Hands each quantized weight to the Linear whose weight parameter has its name, uploaded to the model's backend;
 * `source` names the weights in errors.
 */
export function useQuantizedWeights(
  model: Module,
  quantized: readonly NamedQuantizedTensor[],
  source: string,
): void {
  if (quantized.length === 0) return;
  const linears = linearsByWeightName(model);
  for (const q of quantized) {
    const linear = linears.get(q.name);
    if (linear === undefined)
      throw new Error(`${source}: quantized tensor ${q.name} is not a linear layer's weight`);
    const [out, inner] = q.shape;
    const scales = tensor(q.scales, [out, inner / QUANT_BLOCK], { backend: model.backend }); // [out, blocks]
    const quants = tensor(q.quants, [out, q.quants.length / out], { backend: model.backend, dtype: 'i32' }); // [out, words]
    linear.useQuantized(new QuantizedWeight(q.type, scales, quants));
  }
}

/**
 * The weight of every Linear of `model` whose input size is a multiple of 32, quantized to `type` as llama.cpp's
 * reference quantizer writes the blocks, under its weight's name: for `useQuantizedWeights`.
 */
export async function quantizedLinearWeights(
  model: Module,
  type: QuantType,
): Promise<NamedQuantizedTensor[]> {
  const quantized: NamedQuantizedTensor[] = [];
  for (const [name, linear] of linearsByWeightName(model)) {
    if (linear.inFeatures % QUANT_BLOCK !== 0) continue;
    const values = await linear.weight.float32Data();
    const shape: [number, number] = [linear.outFeatures, linear.inFeatures];
    quantized.push(repackGgufBlocks(name, type, shape, quantize(values, type === 'q8_0' ? 'Q8_0' : 'Q4_0')));
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
