import {
  arange,
  cast,
  compare,
  layernorm,
  layernormGrad,
  ones,
  rmsnorm,
  rmsnormGrad,
  rope,
  softmax,
  sum,
  type Tensor,
  type TensorInfo,
  tensor,
  zeros,
} from '@loom/tensor';
import type { BackwardFn } from '../tape';
import type { RuleContext } from './context';

/** dx = y (g - sum(g y)) over the last axis. */
export function softmaxRule(ctx: RuleContext, out: TensorInfo): BackwardFn {
  return (g) => {
    const y = ctx.borrow(out);
    return [y.mul(g.sub(g.mul(y).sum(-1, true)))];
  };
}

/** dx = g - softmax(x) sum(g) over the last axis. */
export function logSoftmaxRule(ctx: RuleContext, out: TensorInfo): BackwardFn {
  return (g) => [g.sub(ctx.borrow(out).exp().mul(g.sum(-1, true)))];
}

/** Sums a gradient [..., d] over all rows, giving [d]. */
function sumRows(t: Tensor): Tensor {
  return t.reshape([-1, t.shape[t.rank - 1]]).sum(0); // [d]
}

/** dx from the fused rmsnormGrad; dw = sum over rows of g · rmsnorm(x, 1). */
export function rmsnormRule(ctx: RuleContext, x: TensorInfo, weight: TensorInfo, eps: number): BackwardFn {
  return (g, needs) => {
    const xv = ctx.borrow(x);
    const w = ctx.borrow(weight);
    const dx = needs[0] ? rmsnormGrad(xv, w, g, eps) : undefined;
    const dw = needs[1] ? sumRows(g.mul(rmsnorm(xv, ones(w.shape, { backend: w.backend }), eps))) : undefined;
    return [dx, dw];
  };
}

/** dx from the fused layernormGrad; dw = sum of g · normalised x, db = sum of g. */
export function layernormRule(ctx: RuleContext, x: TensorInfo, weight: TensorInfo, eps: number): BackwardFn {
  return (g, needs) => {
    const xv = ctx.borrow(x);
    const w = ctx.borrow(weight);
    const dx = needs[0] ? layernormGrad(xv, w, g, eps) : undefined;
    const normed = (): Tensor =>
      layernorm(xv, ones(w.shape, { backend: w.backend }), zeros(w.shape, { backend: w.backend }), eps);
    return [dx, needs[1] ? sumRows(g.mul(normed())) : undefined, needs[2] ? sumRows(g) : undefined];
  };
}

/** silu(a) b: da = g b s (1 + a (1 - s)) with s = sigmoid(a); db = g silu(a). */
export function swigluRule(ctx: RuleContext, gate: TensorInfo, up: TensorInfo): BackwardFn {
  return (g, needs) => {
    const a = ctx.borrow(gate);
    const s = a.sigmoid();
    // silu'(a) = s (1 + a (1 - s)), written as s (1 + a - a s).
    const da = needs[0] ? g.mul(ctx.borrow(up)).mul(s.mul(a.sub(a.mul(s)).add(1))) : undefined;
    return [da, needs[1] ? g.mul(a.silu()) : undefined];
  };
}

/**
 * Rotation by -angle is the rotation by +angle conjugated with the reflection that negates
 * the odd element of each pair, so dx = P rope(P g).
 */
export function ropeRule(x: TensorInfo, offset: number, theta: number): BackwardFn {
  return (g) => {
    const hd = x.shape[3];
    const signs = Array.from({ length: hd }, (_, i) => (i % 2 === 0 ? 1 : -1));
    const p = tensor(signs, [hd], { backend: g.backend });
    return [rope(g.mul(p), { offset, theta }).mul(p)];
  };
}

/** d logits = g (softmax(logits) - onehot(target)) / count on rows that are not ignored. */
export function crossEntropyRule(
  ctx: RuleContext,
  logits: TensorInfo,
  targets: TensorInfo,
  ignoreIndex: number,
): BackwardFn {
  return (g) => {
    const [n, v] = logits.shape;
    const t = ctx.borrow(targets);
    const probs = softmax(ctx.borrow(logits));
    const vocab = arange(v, 0, 1, { backend: g.backend, dtype: 'i32' }).reshape([1, v]); // [1, V]
    const onehot = cast(compare('eq', vocab, t.reshape([n, 1])), 'f32'); // [N, V]
    const valid = cast(t.ne(ignoreIndex), 'f32').reshape([n, 1]); // [N, 1]
    const count = sum(valid).maximum(1);
    return [probs.sub(onehot).mul(valid).mul(g.div(count)), undefined];
  };
}
