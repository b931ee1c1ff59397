import { type AdamW, Dropout, type Module } from '@loom/nn';
import { showShape, type Tensor, tensor } from '@loom/tensor';
import type { SavedRun } from './checkpoint';

/** AdamW's state names for parameter i: its first and second moments. */
const MOMENTS = ['m', 'v'] as const;

/**
 * Puts a saved run's weights and optimizer state into a fresh model and optimizer. The
 * optimizer state must hold both moments of every parameter, shaped like it (or nothing, when
 * no update was applied yet).
 */
export function restoreRun(model: Module, optimizer: AdamW, saved: SavedRun): void {
  model.loadStateDict(new Map([...saved.weights, ...saved.heads].map((t) => [t.name, t])));
  const params = model.parameters();
  if (saved.optimizer.size > 0) {
    const problems = params.flatMap((p, i) =>
      MOMENTS.flatMap((moment) => {
        const t = saved.optimizer.get(`${moment}.${i}`);
        if (!t) return [`${moment}.${i} is missing`];
        const same = t.shape.length === p.rank && t.shape.every((d, j) => d === p.shape[j]);
        return same ? [] : [`${moment}.${i} is ${showShape(t.shape)}, its parameter ${showShape(p.shape)}`];
      }),
    );
    if (saved.optimizer.size !== 2 * params.length) {
      problems.push(
        `${saved.optimizer.size} tensors for ${params.length} parameters (expected ${2 * params.length})`,
      );
    }
    if (problems.length > 0) {
      throw new Error(`--resume: the saved optimizer state does not fit the model: ${problems.join('; ')}`);
    }
  }
  const state = new Map<string, Tensor>(
    [...saved.optimizer].map(([name, t]) => [name, tensor(t.data, t.shape)]),
  );
  optimizer.loadState(state, saved.state.optimizerSteps);
  restoreDropout(model, saved.state.trainingForwards);
}

/** Continues every dropout layer's mask stream where the saved run stopped. */
function restoreDropout(model: Module, forwards: number): void {
  for (const m of model.modules()) if (m instanceof Dropout) m.restore(forwards);
}
