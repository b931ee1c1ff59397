import { type Backend, type DType, type HostArray, type Shape, withComposites } from '@loom/tensor';
import type { OpCase } from './case';
import { makeInputs } from './inputs';

/** What one run of a case produced. */
export interface CaseResult {
  readonly shape: Shape;
  readonly dtype: DType;
  readonly values: HostArray;
  /** Live storages and bytes on the backend after the result was disposed, minus before. */
  readonly leakedCount: number;
  readonly leakedBytes: number;
}

/**
 * Uploads the case's inputs, runs it (composite path when `composite`), reads the result and
 * disposes everything, measuring what stays alive on the backend.
 */
export async function runCase(
  backend: Backend,
  c: OpCase,
  seed: number,
  composite = false,
): Promise<CaseResult> {
  const inputs = makeInputs(backend, c.inputs, seed);
  const count = backend.liveCount();
  const bytes = backend.liveBytes();
  const out = composite ? withComposites(() => c.run(inputs, backend)) : c.run(inputs, backend);
  const values = await out.data();
  const { shape, dtype } = out;
  out.dispose();
  const leakedCount = backend.liveCount() - count;
  const leakedBytes = backend.liveBytes() - bytes;
  for (const t of inputs) t.dispose();
  return { shape, dtype, values, leakedCount, leakedBytes };
}
