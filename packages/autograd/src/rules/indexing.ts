import { gather, scatterAdd, type TensorInfo } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import type { RuleContext } from './context';

/** Rows picked by gather send their gradients back with a scatter-add (repeated ids add up). */
export function gatherRule(ctx: RuleContext, table: TensorInfo, ids: TensorInfo): BackwardFn {
  return (g) => [scatterAdd(g, ctx.borrow(ids), table.shape[0]).reshape(table.shape), undefined];
}

/** Each source row receives the gradient of the output row it was added to. */
export function scatterAddRule(ctx: RuleContext, src: TensorInfo, ids: TensorInfo): BackwardFn {
  return (g) => [gather(g, ctx.borrow(ids)).reshape(src.shape), undefined];
}
