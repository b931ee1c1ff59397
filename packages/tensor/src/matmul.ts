import { assertSameDType } from './dtype';
import { sameBackend } from './guards';
import { broadcastTo } from './movement';
import { broadcastShapes, shapesEqual, showShape, sizeOf } from './shape';
import type { MatmulOptions, Tensor } from './tensor';

/**
 * Batched matrix product over the last two axes; leading (batch) axes broadcast.
 * a [..., m, k] x b [..., k, n] -> [..., m, n].
 */
export function matmul(a: Tensor, b: Tensor, options: MatmulOptions = {}): Tensor {
  const transA = options.transA ?? false;
  const transB = options.transB ?? false;
  const backend = sameBackend('matmul', a, b);
  assertSameDType('matmul', a.dtype, b.dtype);
  if (a.dtype !== 'f32') throw new Error(`matmul: expected f32 operands, got ${a.dtype}; cast them first`);
  if (a.rank < 2 || b.rank < 2) {
    throw new Error(
      `matmul: both operands need at least 2 axes, got ${showShape(a.shape)} and ${showShape(b.shape)}; reshape vectors to [1, n]`,
    );
  }
  const [ar, ac] = a.shape.slice(-2);
  const [br, bc] = b.shape.slice(-2);
  const m = transA ? ac : ar;
  const k = transA ? ar : ac;
  const kb = transB ? bc : br;
  const n = transB ? br : bc;
  if (k !== kb) {
    throw new Error(
      `matmul: inner dimensions differ: ${showShape(a.shape)}${transA ? 'ᵀ' : ''} x ${showShape(b.shape)}${transB ? 'ᵀ' : ''} ` +
        `(${k} vs ${kb})`,
    );
  }
  const aBatch = a.shape.slice(0, -2);
  const bBatch = b.shape.slice(0, -2);
  const outBatch = broadcastShapes('matmul', aBatch, bBatch);
  const outShape = [...outBatch, m, n];
  // A shared right operand and untransposed left: fold a's batch into its rows, one big product.
  if (bBatch.length === 0 && !transA && aBatch.length > 0) {
    const spec = { batch: 1, m: sizeOf(aBatch) * m, n, k, transA, transB, aBatchStride: 0, bBatchStride: 0 };
    return a.adopt(backend.matmul(a.info('matmul'), b.info('matmul'), spec), outShape, 'f32');
  }
  const batch = sizeOf(outBatch);
  const operand = (t: Tensor, tBatch: readonly number[]): { t: Tensor; stride: number } => {
    const matrix = t.shape[t.rank - 2] * t.shape[t.rank - 1];
    if (sizeOf(tBatch) === 1) return { t, stride: 0 };
    if (
      shapesEqual(broadcastShapes('matmul', tBatch, outBatch), tBatch) &&
      tBatch.length === outBatch.length
    ) {
      return { t, stride: matrix };
    }
    return { t: broadcastTo(t, [...outBatch, ...t.shape.slice(-2)]), stride: matrix };
  };
  const left = operand(a, aBatch);
  const right = operand(b, bBatch);
  const spec = { batch, m, n, k, transA, transB, aBatchStride: left.stride, bBatchStride: right.stride };
  const id = backend.matmul(left.t.info('matmul'), right.t.info('matmul'), spec);
  if (left.t !== a) left.t.dispose();
  if (right.t !== b) right.t.dispose();
  return a.adopt(id, outShape, 'f32');
}
