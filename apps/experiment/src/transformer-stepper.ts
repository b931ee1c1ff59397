import { KVCache } from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { tensor } from '@loom/tensor';
import type { Stepper } from './decode-timing';
import { kvBytes } from './kv-bytes';

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
  return {
    prefill: run,
    step: (token) => run(Int32Array.of(token)),
    // Keys and values of every layer for the positions written so far, float32.
    stateBytes: () => kvBytes(model.config, offset),
    dispose: () => cache.dispose(),
  };
}
