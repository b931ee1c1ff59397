import { type Shape, sum, type Tensor } from '@loom/tensor';

/**
 * The one place broadcast gradients are reduced: sums `grad` (shaped like a broadcast
 * result) over the axes along which an input of `shape` was broadcast, then gives it `shape`.
 */
export function unbroadcast(grad: Tensor, shape: Shape): Tensor {
  const lead = grad.rank - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < grad.rank; i++) {
    if (i < lead || (shape[i - lead] === 1 && grad.shape[i] !== 1)) axes.push(i);
  }
  if (axes.length === 0) return grad.reshape(shape);
  return sum(grad, axes).reshape(shape);
}
