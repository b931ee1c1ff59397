import {
  attention,
  type Backend,
  matmul,
  rand,
  rmsnorm,
  scatterAdd,
  softmax,
  sum,
  type Tensor,
  tensor,
} from '@loom/tensor';
import { seeded } from './reference';

/** Named results of a handful of ops, as plain arrays so they cross from the page to Node. */
export type CheckResults = Record<string, number[]>;

function f32(backend: Backend, n: number, seed: number, shape: number[]): Tensor {
  return tensor(seeded(n, seed), shape, { backend });
}

/**
 * Runs the browser smoke checks on `backend`: the page runs them on WebGPU, the Node test on
 * the CPU reference, and the results are compared.
 */
export async function runChecks(backend: Backend): Promise<CheckResults> {
  const results: CheckResults = {};
  const read = async (name: string, t: Tensor) => {
    results[name] = Array.from(await t.data());
  };
  await read(
    'matmul [33, 65] x [17, 65]ᵀ',
    matmul(f32(backend, 33 * 65, 1, [33, 65]), f32(backend, 17 * 65, 2, [17, 65]), { transB: true }),
  );
  await read(
    'matmul decode [1, 288] x [500, 288]ᵀ',
    matmul(f32(backend, 288, 3, [1, 288]), f32(backend, 500 * 288, 4, [500, 288]), { transB: true }),
  );
  await read(
    'matmul [2, 40, 24] x [24, 70]',
    matmul(f32(backend, 2 * 40 * 24, 5, [2, 40, 24]), f32(backend, 24 * 70, 6, [24, 70])),
  );
  await read('softmax over 32000', softmax(f32(backend, 32_000, 7, [1, 32_000]).mul(8)));
  const q = f32(backend, 3 * 8 * 16, 8, [1, 3, 8, 16]);
  const k = f32(backend, 20 * 2 * 16, 9, [1, 20, 2, 16]);
  const v = f32(backend, 20 * 2 * 16, 10, [1, 20, 2, 16]);
  await read('attention GQA 8/2 heads, 3 queries at offset 17', attention(q, k, v, { offset: 17 }));
  await read(
    'attention decode at offset 19',
    attention(f32(backend, 8 * 16, 11, [1, 1, 8, 16]), k, v, { offset: 19 }),
  );
  await read('rmsnorm [4, 288]', rmsnorm(f32(backend, 4 * 288, 12, [4, 288]), f32(backend, 288, 13, [288])));
  await read('sum of 100000', sum(f32(backend, 100_000, 14, [100_000])));
  await read('rand seed 5', rand([1000], { seed: 5, backend }));
  const ids = tensor(Int32Array.from([2, 0, 2, 7, 2]), [5], { backend });
  await read('scatterAdd with repeated ids', scatterAdd(f32(backend, 5 * 3, 15, [5, 3]), ids, 4));
  return results;
}
