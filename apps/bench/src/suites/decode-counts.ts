import type { GpuCounts, WebGPUBackend } from '@loom/backend-webgpu';
import type { TransformerLM } from '@loom/nn';
import { InferenceSession, type TokenChooser } from '@loom/runtime';

/** What one greedy decode step asked of the device: the differences of the backend's counters across it. */
export type StepCounts = { readonly [K in keyof GpuCounts]: number };

export function difference(after: GpuCounts, before: GpuCounts): StepCounts {
  const step: Partial<Record<keyof GpuCounts, number>> = {};
  for (const key of Object.keys(before) as (keyof GpuCounts)[]) step[key] = after[key] - before[key];
  return step as StepCounts;
}

/**
 * Runs `warmUp` greedy decode steps, then `steps` more, on a fresh session, and returns the device counters of
 * each of the later steps (feed one token, choose the next on the device, read it back). Counts, not times:
 * they are the same on lavapipe and on a real GPU.
 */
export async function decodeStepCounts(
  model: TransformerLM,
  backend: WebGPUBackend,
  chooser: TokenChooser,
  warmUp: number,
  steps: number,
): Promise<StepCounts[]> {
  if (warmUp + steps >= model.config.maxSeqLen) {
    throw new Error(
      `decodeStepCounts: ${warmUp} + ${steps} steps do not fit in the model's ${model.config.maxSeqLen} positions; ask for fewer`,
    );
  }
  const session = new InferenceSession(model);
  const counts: StepCounts[] = [];
  try {
    let token = 1;
    for (let step = 0; step < warmUp + steps; step++) {
      const before = backend.stats();
      const logits = session.feed([token]);
      token = (await chooser.choose(logits)).token;
      logits.dispose();
      if (step >= warmUp) counts.push(difference(backend.stats(), before));
    }
  } finally {
    session.dispose();
  }
  return counts;
}

/** Counter `key` over `steps`: its mean, and its most in one step (buffers created, which should stay 0). */
export function meanCount(steps: readonly StepCounts[], key: keyof StepCounts): number {
  return steps.reduce((sum, s) => sum + s[key], 0) / steps.length;
}

export function mostCount(steps: readonly StepCounts[], key: keyof StepCounts): number {
  return Math.max(...steps.map((s) => s[key]));
}
