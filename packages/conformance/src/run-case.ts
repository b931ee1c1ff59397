import type { Backend, DType, HostArray, Shape } from '@loom/tensor';
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
 * Uploads the case's inputs, runs it (its composite path when `path` is 'composite'), reads the result and
 * disposes everything, measuring what stays alive on the backend.
 */
export async function runCase(
  backend: Backend,
  c: OpCase,
  seed: number,
  path: 'run' | 'composite' = 'run',
): Promise<CaseResult> {
  const run = path === 'composite' ? c.composite : c.run;
  if (run === undefined) throw new Error(`conformance: ${c.name} has no composite path`);
  const inputs = makeInputs(backend, c.inputs, seed);
  const count = backend.liveCount();
  const bytes = backend.liveBytes();
  const out = run(inputs, backend);
  const values = await out.data();
  const { shape, dtype } = out;
  out.dispose();
  const leakedCount = backend.liveCount() - count;
  const leakedBytes = backend.liveBytes() - bytes;
  for (const t of inputs) t.dispose();
  return { shape, dtype, values, leakedCount, leakedBytes };
}
