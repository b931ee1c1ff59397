import { argmax, sum, type Tensor } from '@loom/tensor';

/** Each row's argmax and sum, read back from the device. */
export interface DeviceArgmax {
  /** The index of each row's first maximum. */
  readonly ids: ArrayLike<number>;
  /** Each row's sum: NaN or +Infinity whenever a logit is, the input of `checkLogitSum`. */
  readonly sums: Float32Array;
}

/**
 * The argmax and the sum of each row of logits [..., vocab] (the last axis), taken where the logits are: 8 bytes a row
 * read back instead of 4 · vocab, for greedy decoding. The intermediate tensors are freed; `logits` is the caller's.
 */
export async function deviceArgmax(logits: Tensor): Promise<DeviceArgmax> {
  const id = argmax(logits, -1); // [...] i32
  const total = sum(logits, -1); // [...] f32
  try {
    const [ids, sums] = await Promise.all([id.data(), total.float32Data()]);
    return { ids, sums };
  } finally {
    id.dispose();
    total.dispose();
  }
}
