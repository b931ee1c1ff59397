import type { Tensor } from '@loom/tensor';

/** Updates parameters in place from their gradients. */
export interface Optimizer {
  /**
   * One update with learning rate `lr`; `grads[i]` belongs to `params[i]`, taken times `gradScale` (1 by default;
   * a clip's factor, `clipFactor`).
   */
  step(params: readonly Tensor[], grads: readonly Tensor[], lr: number, gradScale?: number): void;
  /** The optimizer's state tensors by name, for checkpoints. */
  state(): Map<string, Tensor>;
  /** Restores state saved by `state()`. */
  loadState(state: ReadonlyMap<string, Tensor>, stepCount: number): void;
  readonly stepCount: number;
  dispose(): void;
}
