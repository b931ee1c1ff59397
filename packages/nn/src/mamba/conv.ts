import { concat, scope, showShape, type Tensor, zeros } from '@loom/tensor';

/**
 * Causal depthwise convolution over time: x [B, T, E], weight [E, W] (Mamba's conv1d weight
 * [E, 1, W] without its middle axis), bias [E]; y_t = bias + Σ_k weight[:, k] ⊙ x_{t-W+1+k}.
 * `before` [B, W-1, E] holds the inputs preceding x (zeros at the start of a sequence);
 * returns y [B, T, E] and the last W-1 inputs, the window the next call continues from.
 */
export function causalConv(
  x: Tensor,
  weight: Tensor,
  bias: Tensor,
  before?: Tensor,
): { y: Tensor; window: Tensor } {
  const [batch, steps, e] = x.shape;
  const width = weight.shape[1];
  const fits =
    x.rank === 3 &&
    weight.rank === 2 &&
    weight.shape[0] === e &&
    bias.rank === 1 &&
    bias.shape[0] === e &&
    (before === undefined || showShape(before.shape) === showShape([batch, width - 1, e]));
  if (!fits) {
    throw new Error(
      `causalConv: expected x [B, T, E], weight [E, W], bias [E] and a window [B, W - 1, E]; got x ${showShape(x.shape)}, weight ${showShape(weight.shape)}, bias ${showShape(bias.shape)}${before ? `, window ${showShape(before.shape)}` : ''}`,
    );
  }
  return scope(() => {
    const past = before ?? zeros([batch, width - 1, e], { backend: x.backend });
    const padded = concat([past, x], 1); // [B, T + W - 1, E]
    const taps = weight.transpose(); // [W, E]
    let y = bias.reshape([1, 1, e]);
    for (let k = 0; k < width; k++) {
      const tap = taps.slice([k, 0], [1, e]); // [1, E]
      y = y.add(padded.slice([0, k, 0], [batch, steps, e]).mul(tap)); // [B, T, E]
    }
    return { y, window: padded.slice([0, steps, 0], [batch, width - 1, e]) };
  });
}
