import type { MatmulSpec } from '@loom/tensor';
import type { CpuStorage } from './storage';

/** out [batch, m, n] = A x B as described by `spec` (see MatmulSpec). */
export function matmulInto(spec: MatmulSpec, a: CpuStorage, b: CpuStorage, out: CpuStorage): void {
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = spec;
  const av = a.f32;
  const bv = b.f32;
  const ov = out.f32;
  for (let p = 0; p < batch; p++) {
    const ao = p * aBatchStride;
    const bo = p * bBatchStride;
    const oo = p * m * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let q = 0; q < k; q++) {
          const x = transA ? av[ao + q * m + i] : av[ao + i * k + q];
          const y = transB ? bv[bo + j * k + q] : bv[bo + q * n + j];
          acc += x * y;
        }
        ov[oo + i * n + j] = acc;
      }
    }
  }
}
