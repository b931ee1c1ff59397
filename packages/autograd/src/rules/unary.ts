import { geluGrad, type Tensor, type TensorInfo, type UnaryOp, where } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import type { RuleContext } from './context';

/** d out / d x times the incoming gradient, for each unary op. */
function unaryGrad(op: UnaryOp, x: Tensor, out: Tensor, g: Tensor): Tensor {
  switch (op) {
    case 'neg':
      return g.neg();
    case 'exp':
      return g.mul(out);
    case 'log':
      return g.div(x);
    case 'sqrt':
      return g.mul(0.5).div(out);
    case 'rsqrt':
      return g.mul(out.mul(out).mul(out)).mul(-0.5);
    case 'recip':
      return g.mul(out.mul(out)).neg();
    case 'abs':
      return where(x.gt(0), g, where(x.lt(0), g.neg(), 0));
    case 'tanh':
      return g.mul(out.mul(out).neg().add(1));
    case 'sigmoid':
      return g.mul(out.mul(out.neg().add(1)));
    case 'silu':
      // silu'(x) = s (1 + x (1 - s)) with s = sigmoid(x), which is s (1 + x - out) for out = x s.
      return g.mul(x.sigmoid().mul(x.sub(out).add(1)));
    case 'gelu':
      return geluGrad(x, g);
    case 'relu':
      return where(x.gt(0), g, 0);
    case 'sin':
      return g.mul(x.cos());
    case 'cos':
      return g.mul(x.sin()).neg();
  }
}

export function unaryRule(ctx: RuleContext, op: UnaryOp, x: TensorInfo, out: TensorInfo): BackwardFn {
  return (g) => [unaryGrad(op, ctx.borrow(x), ctx.borrow(out), g)];
}
