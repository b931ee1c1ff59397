import type { Tensor, TensorInfo } from '@loom/tensor';

/** What gradient rules need: a tensor over storage the tape tracks. */
export interface RuleContext {
  borrow(info: TensorInfo): Tensor;
}
