import { headDimOf } from './head-dim';
import { type InferenceModelShape, inferenceMemory, kvPositions } from './inference-memory';

/** Bounds memory must stay within; each is checked by arithmetic before anything is allocated. */
export interface MemoryLimits {
  /** Bytes the allocation may take in all (for example the machine's memory, `os.totalmem()`). */
  readonly totalBytes?: number;
  /** Bytes one tensor may take (for example a WebGPU adapter's `maxBufferSize`). */
  readonly tensorBytes?: number;
}

/** An allocation refused because it would pass one of the `MemoryLimits`. */
export class MemoryLimitError extends Error {
  override readonly name = 'MemoryLimitError';

  constructor(
    /** What would pass which limit, by how many bytes, without advice (callers add their own). */
    readonly reason: string,
    /** Bytes the allocation would take. */
    readonly bytes: number,
    readonly limit: keyof MemoryLimits,
    readonly limitBytes: number,
  ) {
    super(`${reason}; use a shorter context`);
  }
}

/** "N bytes (x.y GiB)". */
export function describeBytes(bytes: number): string {
  return `${bytes} bytes (${(bytes / 2 ** 30).toFixed(1)} GiB)`;
}

/**
 * Checks, by arithmetic alone, that a float32 key/value cache of `positions` positions for one sequence fits the
 * limits: the cache plus the activations of one prefill of all those positions within `totalBytes`, and one layer's
 * keys (a single tensor) within `tensorBytes`. Throws a `MemoryLimitError` saying what and how much otherwise.
 */
export function checkMemoryLimits(model: InferenceModelShape, positions: number, limits: MemoryLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (value !== undefined && !(typeof value === 'number' && value > 0)) {
      throw new Error(`MemoryLimits: ${name} must be a positive number of bytes or absent, got ${value}`);
    }
  }
  const headDim = headDimOf(model);
  // The weights are already in memory; only what the context adds is counted.
  const { kvCache, activations } = inferenceMemory(model, {
    batch: 1,
    seqLen: positions,
    parameters: 0,
    weightBytes: 4,
  });
  const { totalBytes, tensorBytes } = limits;
  if (totalBytes !== undefined && kvCache + activations > totalBytes) {
    throw new MemoryLimitError(
      `the KV cache of ${positions} positions takes ${describeBytes(kvCache)} and one prefill's activations ` +
        `${describeBytes(activations)}: ${describeBytes(kvCache + activations)}, more than the limit of ` +
        `${describeBytes(totalBytes)} (totalBytes)`,
      kvCache + activations,
      'totalBytes',
      totalBytes,
    );
  }
  const held = kvPositions(model, positions);
  const layerKeys = held * model.numKvHeads * headDim * 4;
  if (tensorBytes !== undefined && layerKeys > tensorBytes) {
    throw new MemoryLimitError(
      `one layer's keys of ${held} positions, [1, ${held}, ${model.numKvHeads}, ${headDim}] float32, take ` +
        `${describeBytes(layerKeys)}, more than the limit of ${describeBytes(tensorBytes)} for one tensor (tensorBytes)`,
      layerKeys,
      'tensorBytes',
      tensorBytes,
    );
  }
}
