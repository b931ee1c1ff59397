import { broadcastTo, type ReduceDims, type ReduceOp, type TensorInfo } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import type { RuleContext } from './context';

/**
 * Sum: every input element receives the gradient of its output element. Max: the gradient
 * goes to the elements equal to the maximum (split evenly between ties).
 */
export function reduceRule(
  ctx: RuleContext,
  op: ReduceOp,
  x: TensorInfo,
  out: TensorInfo,
  dims: ReduceDims,
): BackwardFn {
  const { outer, size, inner } = dims;
  return (g) => {
    const spread = g.reshape([outer, 1, inner]); // [outer, 1, inner]
    if (op === 'sum') return [broadcastTo(spread, [outer, size, inner]).reshape(x.shape)];
    const input = ctx.borrow(x).reshape([outer, size, inner]); // [outer, size, inner]
    const top = ctx.borrow(out).reshape([outer, 1, inner]); // [outer, 1, inner]
    const mask = input.eq(top).cast('f32');
    const ties = mask.sum(1, true); // [outer, 1, inner]
    return [mask.mul(spread).div(ties).reshape(x.shape)];
  };
}
