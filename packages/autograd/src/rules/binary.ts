import { type BinaryOp, type Tensor, type TensorInfo, where } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import { unbroadcast } from '../unbroadcast';
import type { RuleContext } from './context';

/** Gradient of operand `which` (0: a, 1: b), shaped like the broadcast result. */
function binaryGrad(op: BinaryOp, which: 0 | 1, a: Tensor, b: Tensor, out: Tensor, g: Tensor): Tensor {
  switch (op) {
    case 'add':
      return g;
    case 'sub':
      return which === 0 ? g : g.neg();
    case 'mul':
      return g.mul(which === 0 ? b : a);
    case 'div':
      return which === 0 ? g.div(b) : g.mul(out).div(b).neg();
    case 'pow':
      return which === 0 ? g.mul(b).mul(a.pow(b.sub(1))) : g.mul(out).mul(a.log());
    case 'max':
      return which === 0 ? where(a.ge(b), g, 0) : where(a.ge(b), 0, g);
    case 'min':
      return which === 0 ? where(a.le(b), g, 0) : where(a.le(b), 0, g);
  }
}

export function binaryRule(
  ctx: RuleContext,
  op: BinaryOp,
  a: TensorInfo,
  b: TensorInfo,
  out: TensorInfo,
): BackwardFn {
  return (g, needs) => {
    const [at, bt, ot] = [ctx.borrow(a), ctx.borrow(b), ctx.borrow(out)];
    return [
      needs[0] ? unbroadcast(binaryGrad(op, 0, at, bt, ot, g), a.shape) : undefined,
      needs[1] ? unbroadcast(binaryGrad(op, 1, at, bt, ot, g), b.shape) : undefined,
    ];
  };
}

/** where(cond, a, b): the gradient goes to a where cond holds and to b elsewhere. */
export function whereRule(ctx: RuleContext, cond: TensorInfo, a: TensorInfo, b: TensorInfo): BackwardFn {
  return (g, needs) => {
    const c = ctx.borrow(cond);
    return [
      undefined,
      needs[1] ? unbroadcast(where(c, g, 0), a.shape) : undefined,
      needs[2] ? unbroadcast(where(c, 0, g), b.shape) : undefined,
    ];
  };
}
