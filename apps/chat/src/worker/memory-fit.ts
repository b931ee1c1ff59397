import { checkMemoryLimits, describeBytes, MemoryLimitError, type MemoryLimits } from '@loom/kvcache';
import { expectedTensors, type LoadedModel } from '@loom/models';
import { sizeOf } from '@loom/tensor';

/** The memory a backend offers a model, and where each bound comes from (for the message). */
export interface BackendLimits extends MemoryLimits {
  /** The backend the limits are of: the advice to move to the CPU is given on WebGPU only. */
  readonly backend: 'webgpu' | 'cpu';
  /** What bounds one tensor, e.g. "the WebGPU adapter's maxStorageBufferBindingSize". */
  readonly tensorLimit?: string;
  /** What bounds all of it, e.g. "the memory limit". */
  readonly totalLimit?: string;
}

const CPU_ADVICE = ', or run on the CPU backend (open the page with ?backend=cpu)';

/**
 * The bytes a model built from `loaded` holds on its backend: every weight's float32 values, except that a weight
 * kept compact (a file parsed with `weights: 'quantized'`: a linear layer's or the embedding's blocks or 16-bit
 * halves) holds those instead, whether or not `loaded.tensors` also has its float32 values (the model frees them).
 */
export function heldWeightBytes(loaded: LoadedModel): number {
  const quantized = loaded.quantized ?? [];
  const halves = loaded.halves ?? [];
  const replaced = new Set([...quantized, ...halves].map((q) => q.name));
  const blocks = quantized.reduce((sum, q) => sum + q.scales.byteLength + q.quants.byteLength, 0);
  const packed = halves.reduce((sum, h) => sum + h.packed.byteLength, 0);
  const f32 = loaded.tensors
    .filter((t) => !replaced.has(t.name))
    .reduce((sum, t) => sum + t.data.byteLength, 0);
  return f32 + blocks + packed;
}

/** The most positions (at most `context`) whose cache fits within `limits` beside the weights, 0 when none does. */
function largestContext(loaded: LoadedModel, context: number, limits: MemoryLimits): number {
  const fits = (positions: number) => {
    try {
      checkMemoryLimits(loaded.config, positions, limits);
      return true;
    } catch (error) {
      if (error instanceof MemoryLimitError) return false;
      throw error;
    }
  };
  let [low, high] = [0, context]; // fits(low) (or low = 0), !fits(high + 1)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * Checks by arithmetic, before anything is allocated, that a model runs on a backend with a cache of `context`
 * positions: every weight tensor within the one-tensor limit (its float32 values, or a layer's blocks or halves where
 * it keeps only those: the backends never allocate the f32 weights such a layer frees unused), the weights as held
 * (heldWeightBytes) within the total, and the
 * key/value cache (with one prefill's activations) within what the weights leave. Throws saying what is too large, by how
 * much, and what to do: the largest context that fits, or the CPU backend.
 */
export function checkModelFits(
  loaded: LoadedModel,
  source: string,
  context: number,
  limits: BackendLimits,
): void {
  const { maxSeqLen } = loaded.config;
  if (!Number.isInteger(context) || context < 1 || context > maxSeqLen) {
    throw new Error(
      `Context must be a whole number of positions in [1, ${maxSeqLen}] (the model's maxSeqLen), got ${context}; ` +
        'leave it empty for the whole maxSeqLen',
    );
  }
  const { tensorBytes, totalBytes, backend } = limits;
  const moveToCpu = backend === 'webgpu' ? CPU_ADVICE : '';
  const blocks = new Map((loaded.quantized ?? []).map((q) => [q.name, q]));
  const halves = new Map((loaded.halves ?? []).map((h) => [h.name, h]));
  for (const { name, shape } of expectedTensors(loaded.config)) {
    const [kept, half] = [blocks.get(name), halves.get(name)];
    // A layer's blocks are two tensors: its scales and its codes; its halves one, of 16-bit values.
    const bytes = kept
      ? Math.max(kept.scales.byteLength, kept.quants.byteLength)
      : (half?.packed.byteLength ?? 4 * sizeOf(shape));
    const form = kept ? `${kept.type} codes take` : half ? `${half.type} values take` : 'float32 takes';
    if (tensorBytes !== undefined && bytes > tensorBytes) {
      throw new Error(
        `${source}: the weight ${name} [${shape.join(', ')}] ${form} ${describeBytes(bytes)}, more ` +
          `than ${limits.tensorLimit ?? 'the limit for one tensor'} of ${describeBytes(tensorBytes)}; ` +
          `use a smaller model${moveToCpu}`,
      );
    }
  }
  const weights = heldWeightBytes(loaded);
  if (totalBytes !== undefined && weights >= totalBytes) {
    throw new Error(
      `${source}: the weights take ${describeBytes(weights)}, more than ${limits.totalLimit ?? 'the memory limit'} ` +
        `of ${describeBytes(totalBytes)}; use a smaller model${moveToCpu}`,
    );
  }
  const left: MemoryLimits = {
    ...(tensorBytes === undefined ? {} : { tensorBytes }),
    ...(totalBytes === undefined ? {} : { totalBytes: totalBytes - weights }),
  };
  try {
    checkMemoryLimits(loaded.config, context, left);
  } catch (error) {
    if (!(error instanceof MemoryLimitError)) throw error;
    const fits = largestContext(loaded, context, left);
    const bound = error.limit === 'tensorBytes' ? limits.tensorLimit : limits.totalLimit;
    const beside = error.limit === 'totalBytes' ? ` beside the weights' ${describeBytes(weights)}` : '';
    throw new Error(
      `${source}: a context of ${context} positions is too large${beside}: ${error.reason}` +
        `${bound ? ` — ${bound}` : ''}. ` +
        (fits > 0
          ? `Set Context to ${fits} positions or fewer in the Model panel and load the model again${moveToCpu}`
          : `No context fits; use a smaller model${moveToCpu}`),
    );
  }
}
