import { type MatmulSpec, matmul, sum, type Tensor, type TensorInfo } from '@loom/tensor';
import type { BackwardFn } from '../tape';
import type { RuleContext } from './context';

/** Views an operand as [count, rows, cols]: one matrix when its batch stride is 0. */
function asBatch(t: Tensor, stride: number, batch: number, rows: number, cols: number): Tensor {
  return t.reshape([stride === 0 ? 1 : batch, rows, cols]); // [count, rows, cols]
}

/** Sums a per-batch gradient [batch, r, c] back to one matrix when the operand was shared. */
function reduceBatch(grad: Tensor, stride: number, batch: number): Tensor {
  return stride === 0 && batch > 1 ? sum(grad, 0) : grad;
}

/**
 * C = opA(A) opB(B) with opA(A) [m, k] and opB(B) [k, n]:
 * d opA(A) = dC opB(B)ᵀ and d opB(B) = opA(A)ᵀ dC, transposed back where the operand was.
 */
export function matmulRule(ctx: RuleContext, a: TensorInfo, b: TensorInfo, spec: MatmulSpec): BackwardFn {
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = spec;
  return (g, needs) => {
    const dc = g.reshape([batch, m, n]); // [batch, m, n]
    const aRows = transA ? k : m;
    const bRows = transB ? n : k;
    const av = asBatch(ctx.borrow(a), aBatchStride, batch, aRows, transA ? m : k);
    const bv = asBatch(ctx.borrow(b), bBatchStride, batch, bRows, transB ? k : n);
    const da = transA
      ? matmul(bv, dc, { transA: transB, transB: true })
      : matmul(dc, bv, { transB: !transB });
    const db = transB
      ? matmul(dc, av, { transA: true, transB: transA })
      : matmul(av, dc, { transA: !transA });
    return [
      reduceBatch(da, aBatchStride, batch).reshape(a.shape),
      reduceBatch(db, bBatchStride, batch).reshape(b.shape),
    ];
  };
}
