import { KVCache } from '@loom/kvcache';
import type { CrossKVCache, EncoderDecoder } from '@loom/nn';
import { tensor } from '@loom/tensor';
import type { Stepper } from './decode-timing';
import { kvBytes } from './kv-bytes';

/**
 * An encoder–decoder generating a continuation of a source: `prefill` encodes the source into the cross cache,
 * each `step` decodes one token through the decoder with its self-attention cache of `capacity` positions.
 */
export function seq2seqStepper(model: EncoderDecoder, capacity: number): Stepper {
  const cache = KVCache.forModel(model.config, { capacity, backend: model.backend });
  let cross: CrossKVCache | undefined;
  let offset = 0;
  let sourceLength = 0;
  return {
    async prefill(tokens) {
      const source = tensor(tokens, [1, tokens.length], { dtype: 'i32', backend: model.backend }); // [1, S]
      const memory = model.encode(source); // [1, S, dim]
      cross?.dispose();
      cross = model.crossCache(memory);
      source.dispose();
      memory.dispose();
      offset = 0;
      sourceLength = tokens.length;
    },
    async step(token) {
      if (!cross) throw new Error('seq2seqStepper: prefill a source before decoding');
      const input = tensor(Int32Array.of(token), [1, 1], { dtype: 'i32', backend: model.backend }); // [1, 1]
      const logits = model.decode(input, cross, { offset, cache }); // [1, 1, vocab]
      input.dispose();
      await logits.data();
      logits.dispose();
      offset++;
    },
    // The cross keys and values of the source plus the self-attention entries decoded so far.
    stateBytes: () => kvBytes(model.config, sourceLength) + kvBytes(model.config, offset),
    dispose() {
      cross?.dispose();
      cache.dispose();
    },
  };
}
