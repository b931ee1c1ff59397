import { assertDType, assertSameDType, type DType } from './dtype';
import { sameBackend } from './guards';
import type { BinaryOp, CompareOp, UnaryOp } from './primitive-ops';
import { broadcastShapes } from './shape';
import type { Operand, Tensor } from './tensor';

const intUnary: readonly UnaryOp[] = ['neg', 'abs'];

export function unary(op: UnaryOp, x: Tensor): Tensor {
  assertDType(op, x.dtype, intUnary.includes(op) ? ['f32', 'i32'] : ['f32']);
  return x.adopt(x.backend.unary(op, x.info(op)), x.shape, x.dtype);
}

/**
 * Runs `fn` with `b` as a tensor: a number becomes a temporary scalar of `like`'s dtype, an f32
 * one uploaded unrounded so that a float64 backend keeps it exactly.
 */
function withOperand<T>(like: Tensor, b: Operand, fn: (t: Tensor) => T): T {
  if (typeof b !== 'number') return fn(b);
  const values = like.dtype === 'f32' ? Float64Array.of(b) : Int32Array.of(b);
  const scalar = like.adopt(like.backend.upload(values), [], like.dtype);
  try {
    return fn(scalar);
  } finally {
    scalar.dispose();
  }
}

export function binary(op: BinaryOp, a: Tensor, b: Operand): Tensor {
  return withOperand(a, b, (bt) => {
    const backend = sameBackend(op, a, bt);
    assertSameDType(op, a.dtype, bt.dtype);
    if (op === 'pow') assertDType(op, a.dtype, ['f32']);
    const outShape = broadcastShapes(op, a.shape, bt.shape);
    return a.adopt(backend.binary(op, a.info(op), bt.info(op), outShape), outShape, a.dtype);
  });
}

export function compare(op: CompareOp, a: Tensor, b: Operand): Tensor {
  return withOperand(a, b, (bt) => {
    const backend = sameBackend(op, a, bt);
    assertSameDType(op, a.dtype, bt.dtype);
    const outShape = broadcastShapes(op, a.shape, bt.shape);
    return a.adopt(backend.compare(op, a.info(op), bt.info(op), outShape), outShape, 'i32');
  });
}

/** Picks `a` where `cond` is nonzero and `b` elsewhere; all three broadcast together. */
export function where(cond: Tensor, a: Operand, b: Operand): Tensor {
  const like = typeof a !== 'number' ? a : typeof b !== 'number' ? b : undefined;
  if (!like) throw new Error('where: at least one of the two value operands must be a tensor');
  return withOperand(like, a, (at) =>
    withOperand(like, b, (bt) => {
      const backend = sameBackend('where', cond, at, bt);
      assertSameDType('where', at.dtype, bt.dtype);
      const outShape = broadcastShapes('where', cond.shape, at.shape, bt.shape);
      const id = backend.where(cond.info('where'), at.info('where'), bt.info('where'), outShape);
      return at.adopt(id, outShape, at.dtype);
    }),
  );
}

/** Converts to another dtype; f32 to i32 truncates toward zero. */
export function cast(x: Tensor, dtype: DType): Tensor {
  if (x.dtype === dtype) return x.view(x.shape);
  return x.adopt(x.backend.cast(x.info('cast'), dtype), x.shape, dtype);
}

export const neg = (x: Tensor) => unary('neg', x);
export const exp = (x: Tensor) => unary('exp', x);
export const log = (x: Tensor) => unary('log', x);
export const sqrt = (x: Tensor) => unary('sqrt', x);
export const rsqrt = (x: Tensor) => unary('rsqrt', x);
export const recip = (x: Tensor) => unary('recip', x);
export const abs = (x: Tensor) => unary('abs', x);
export const tanh = (x: Tensor) => unary('tanh', x);
export const sigmoid = (x: Tensor) => unary('sigmoid', x);
export const silu = (x: Tensor) => unary('silu', x);
/** GELU, tanh approximation (as GPT-2). */
export const gelu = (x: Tensor) => unary('gelu', x);
export const relu = (x: Tensor) => unary('relu', x);
export const sin = (x: Tensor) => unary('sin', x);
export const cos = (x: Tensor) => unary('cos', x);

export const add = (a: Tensor, b: Operand) => binary('add', a, b);
export const sub = (a: Tensor, b: Operand) => binary('sub', a, b);
export const mul = (a: Tensor, b: Operand) => binary('mul', a, b);
/** Division; on i32 it truncates toward zero and a zero divisor returns the dividend. */
export const div = (a: Tensor, b: Operand) => binary('div', a, b);
export const pow = (a: Tensor, b: Operand) => binary('pow', a, b);
export const maximum = (a: Tensor, b: Operand) => binary('max', a, b);
export const minimum = (a: Tensor, b: Operand) => binary('min', a, b);

export const eq = (a: Tensor, b: Operand) => compare('eq', a, b);
export const ne = (a: Tensor, b: Operand) => compare('ne', a, b);
export const lt = (a: Tensor, b: Operand) => compare('lt', a, b);
export const le = (a: Tensor, b: Operand) => compare('le', a, b);
export const gt = (a: Tensor, b: Operand) => compare('gt', a, b);
export const ge = (a: Tensor, b: Operand) => compare('ge', a, b);
