import { type BinaryOp, type Tensor, type TensorInfo, where } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import { unbroadcast } from '../unbroadcast';
import type { RuleContext } from './context';

/** Gradients of both operands, shaped like the broadcast result. */
function binaryGrads(op: BinaryOp, a: Tensor, b: Tensor, out: Tensor, g: Tensor): [Tensor, Tensor] {
  switch (op) {
    case 'add':
      return [g, g];
    case 'sub':
      return [g, g.neg()];
    case 'mul':
      return [g.mul(b), g.mul(a)];
    case 'div':
      return [g.div(b), g.mul(a).div(b.mul(b)).neg()];
    case 'pow':
      return [g.mul(b).mul(a.pow(b.sub(1))), g.mul(out).mul(a.log())];
    case 'max':
      return [where(a.ge(b), g, 0), where(a.ge(b), 0, g)];
    case 'min':
      return [where(a.le(b), g, 0), where(a.le(b), 0, g)];
  }
}

export function binaryRule(
  ctx: RuleContext,
  op: BinaryOp,
  a: TensorInfo,
  b: TensorInfo,
  out: TensorInfo,
): BackwardFn {
  return (g) => {
    const [ga, gb] = binaryGrads(op, ctx.borrow(a), ctx.borrow(b), ctx.borrow(out), g);
    return [unbroadcast(ga, a.shape), unbroadcast(gb, b.shape)];
  };
}

/** where(cond, a, b): the gradient goes to a where cond holds and to b elsewhere. */
export function whereRule(ctx: RuleContext, cond: TensorInfo, a: TensorInfo, b: TensorInfo): BackwardFn {
  return (g) => {
    const c = ctx.borrow(cond);
    return [undefined, unbroadcast(where(c, g, 0), a.shape), unbroadcast(where(c, 0, g), b.shape)];
  };
}
