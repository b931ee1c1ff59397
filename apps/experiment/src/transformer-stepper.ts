import { KVCache, kvCacheBytes } from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { tensor } from '@loom/tensor';
import type { Stepper } from './decode-timing';

/** A TransformerLM decoding through a preallocated KV cache of `capacity` positions. */
export function transformerStepper(model: TransformerLM, capacity: number): Stepper {
  const cache = KVCache.forModel(model.config, { capacity, backend: model.backend });
  let offset = 0;
  const run = async (ids: Int32Array) => {
    const input = tensor(ids, [1, ids.length], { dtype: 'i32', backend: model.backend }); // [1, T]
    const logits = model.forward(input, { offset, cache }); // [1, T, vocab]
    input.dispose();
    await logits.data();
    logits.dispose();
    offset += ids.length;
  };
  const { numLayers: layers, numKvHeads: kvHeads } = model.config;
  return {
    prefill: run,
    step: (token) => run(Int32Array.of(token)),
    // Keys and values of every layer for the positions written so far, float32.
    stateBytes: () =>
      kvCacheBytes({ batch: 1, seqLen: offset, layers, kvHeads, headDim: cache.headDim, bytesPerElement: 4 }),
    dispose: () => cache.dispose(),
  };
}
