import type { MambaLM } from '@loom/nn';
import { tensor } from '@loom/tensor';
import type { Stepper } from './decode-timing';

/** A MambaLM decoding from its fixed-size recurrent state (convolution window and SSM state per layer). */
export function mambaStepper(model: MambaLM): Stepper {
  const state = model.newState(1);
  const run = async (ids: Int32Array) => {
    const input = tensor(ids, [1, ids.length], { dtype: 'i32', backend: model.backend }); // [1, T]
    const logits = model.prefill(input, state); // [1, vocab]
    input.dispose();
    await logits.data();
    logits.dispose();
  };
  return {
    prefill: run,
    step: (token) => run(Int32Array.of(token)),
    stateBytes: () => state.bytes,
    dispose: () => state.dispose(),
  };
}
