import type { Module } from '@loom/nn';
import { keep, scope, type Tensor } from '@loom/tensor';
import { type Batch, drawBatch } from './batches';
import type { StreamName } from './random';

/**
 * Mean of `loss` over `batches` with the model in evaluation mode (no dropout, no gradients); one read-back.
 * Each loss is a scalar tensor of one batch.
 */
export async function meanLoss(
  model: Module,
  batches: readonly Batch[],
  loss: (batch: Batch) => Tensor,
): Promise<number> {
  const wasTraining = model.training;
  model.eval();
  let sum: Tensor | undefined;
  try {
    for (const batch of batches) {
      const previous = sum;
      sum = keep(
        scope(() => {
          const value = loss(batch);
          return previous ? previous.add(value) : value;
        }),
      );
      previous?.dispose();
    }
    if (!sum) throw new Error('meanLoss: expected at least one batch, got none');
    return (await sum.item()) / batches.length;
  } finally {
    sum?.dispose();
    model.train(wasTraining);
  }
}

/**
 * The fixed evaluation batches of a split: the same every evaluation (drawn from their own
 * stream), so successive estimates differ only by what the model learned.
 */
export function evalBatches(
  tokens: Int32Array,
  seed: number,
  stream: Extract<StreamName, 'evalTrain' | 'evalVal'>,
  count: number,
  rows: number,
  block: number,
): Batch[] {
  return Array.from({ length: count }, (_, i) => drawBatch(tokens, seed, stream, i, rows, block));
}
