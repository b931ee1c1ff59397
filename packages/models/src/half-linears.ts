import type { Module } from '@loom/nn';
import { type HalfType, HalfWeight, packHalves, tensor } from '@loom/tensor';
import { isCompactWeight, isLinearWeight } from './gguf/quantized';
import { compactLayer, compactLayersByWeightName } from './quantize-model';
import type { SafetensorsDType } from './safetensors/dtype';
import type { NamedTensor } from './tensor';

/** A linear layer's weight or an embedding [out, in] kept at 16 bits, laid out as HalfWeight expects. */
export interface NamedHalfTensor {
  readonly name: string;
  readonly type: HalfType;
  /** [out, in]. */
  readonly shape: readonly [number, number];
  /** Two values per word, [out, in / 2]. */
  readonly packed: Int32Array;
}

/**
 * The 16-bit type every float tensor of a file was stored in (its safetensors dtypes), or undefined when any is F32
 * or they differ: a checkpoint saved in BF16 or F16 throughout, as Hugging Face checkpoints are.
 */
export function storedHalfType(dtypes: ReadonlyMap<string, SafetensorsDType>): HalfType | undefined {
  const floats = [...dtypes.values()].filter((dtype) => dtype !== 'I32');
  if (floats.length > 0 && floats.every((dtype) => dtype === 'BF16')) return 'bf16';
  if (floats.length > 0 && floats.every((dtype) => dtype === 'F16')) return 'f16';
  return undefined;
}

/**
 * The linear-layer weights and the embedding among `tensors` (Loom names, see isCompactWeight) packed back to `type`:
 * exact, since their float32 values were widened from that type (rows of odd length stay float32 only).
 */
export function halfLinearTensors(tensors: readonly NamedTensor[], type: HalfType): NamedHalfTensor[] {
  return tensors.flatMap((t) => {
    if (!isCompactWeight(t.name) || t.shape.length !== 2 || t.shape[1] % 2 !== 0) return [];
    const shape: [number, number] = [t.shape[0], t.shape[1]];
    return [{ name: t.name, type, shape, packed: packHalves(type, t.data) }];
  });
}

/**
 * Hands each 16-bit weight to the Linear or Embedding whose weight parameter has its name, uploaded to the model's
 * backend, so its products and lookups read half the bytes; `source` names the weights in errors.
 */
export function useHalfWeights(model: Module, halves: readonly NamedHalfTensor[], source: string): void {
  if (halves.length === 0) return;
  const layers = compactLayersByWeightName(model);
  for (const h of halves) {
    const layer = compactLayer(layers, h.name, '16-bit', source);
    const [out, inner] = h.shape;
    const packed = tensor(h.packed, [out, inner / 2], { backend: model.backend, dtype: 'i32' }); // [out, in / 2]
    layer.useQuantized(new HalfWeight(h.type, packed));
  }
}

/** The weight of every Linear of `model` (of even input size) rounded to `type`, under its weight's name: for `useHalfWeights`. */
export async function halfLinearWeights(model: Module, type: HalfType): Promise<NamedHalfTensor[]> {
  const tensors: NamedTensor[] = [];
  for (const [name, param] of model.namedParameters()) {
    if (isLinearWeight(name))
      tensors.push({ name, shape: [...param.shape], data: await param.float32Data() });
  }
  return halfLinearTensors(tensors, type);
}

/**
 * Rounds the weight of every Linear of `model` (of even input size) to `type` and has its products read the 16-bit
 * form (the f32 weights stay the parameters); returns the number of layers converted. For inference.
 */
export async function halfLinears(model: Module, type: HalfType): Promise<number> {
  const halves = await halfLinearWeights(model, type);
  useHalfWeights(model, halves, 'halfLinears');
  return halves.length;
}
