import { valueAndGrad } from '@loom/autograd';
import { clipFactor, GradAccumulator, gradNorm, type Optimizer } from '@loom/nn';
import { concat, keep, scope, type Tensor } from '@loom/tensor';
import type { Batch } from './batches';

/** What one optimizer step did. */
export type StepOutcome =
  | { readonly kind: 'updated'; readonly loss: number; readonly gradNorm: number }
  /** The loss or gradient norm was NaN or infinite; the weights and optimizer state were not touched. */
  | { readonly kind: 'nonfinite'; readonly loss: number; readonly gradNorm: number };

export interface StepInput {
  /** Scalar loss of one micro-batch (the architecture's objective), recorded for autograd. */
  readonly loss: (batch: Batch) => Tensor;
  readonly params: readonly Tensor[];
  readonly optimizer: Optimizer;
  /** Micro-batches whose gradients are averaged. */
  readonly batches: readonly Batch[];
  readonly lr: number;
  /** Maximum global gradient norm; 0: no clipping. */
  readonly clip: number;
}

/** Loss and gradients of one micro-batch (the caller disposes them). */
function lossAndGrads(
  loss: StepInput['loss'],
  params: readonly Tensor[],
  batch: Batch,
): { loss: Tensor; grads: Tensor[] } {
  const { value, grads } = valueAndGrad(() => loss(batch), params);
  return { loss: value, grads };
}

/** Mean loss and gradients over the micro-batches (the caller disposes them). */
function meanLossAndGrads(input: StepInput): { loss: Tensor; grads: Tensor[] } {
  const { params, batches } = input;
  if (batches.length === 0) throw new Error('trainStep: expected at least one micro-batch, got none');
  if (batches.length === 1) return lossAndGrads(input.loss, params, batches[0]);
  const accumulator = new GradAccumulator();
  let lossSum: Tensor | undefined;
  for (const batch of batches) {
    const { loss, grads } = lossAndGrads(input.loss, params, batch);
    accumulator.add(grads);
    for (const g of grads) g.dispose();
    const previous = lossSum;
    lossSum = keep(previous ? previous.add(loss) : loss.add(0));
    previous?.dispose();
    loss.dispose();
  }
  const loss = keep(lossSum!.div(batches.length));
  lossSum!.dispose();
  return { loss, grads: accumulator.take() };
}

/**
 * One update: forward and backward over the micro-batches, then the optimizer with the gradients clipped (the clip's
 * factor passed to it, not applied to a copy of every gradient) — but only when the loss and the gradient norm are
 * finite. Both are read back together in one transfer; the update is applied after that check, so a NaN never
 * reaches the weights.
 */
export async function trainStep(input: StepInput): Promise<StepOutcome> {
  const { loss, grads } = meanLossAndGrads(input);
  const norm = gradNorm(grads);
  const both = scope(() => concat([loss.reshape([1]), norm.reshape([1])]));
  const [lossValue, normValue] = await both.data();
  for (const t of [both, loss, norm]) t.dispose();
  const finite = Number.isFinite(lossValue) && Number.isFinite(normValue);
  if (finite) {
    const scale = input.clip > 0 ? clipFactor(normValue, input.clip) : 1;
    input.optimizer.step(input.params, grads, input.lr, scale);
  }
  for (const g of grads) g.dispose();
  return { kind: finite ? 'updated' : 'nonfinite', loss: lossValue, gradNorm: normValue };
}
