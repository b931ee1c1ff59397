import type { Backend, Tensor } from '@loom/tensor';
import type { InputSpec } from './inputs';
import type { Tolerance } from './tolerance';

/** One op applied to seeded inputs of given shapes, compared with the CPU reference. */
export interface OpCase {
  /** Shown in failures, e.g. "add [3, 1] x [1, 4]". */
  readonly name: string;
  readonly inputs: readonly InputSpec[];
  /** Builds the result from the uploaded inputs; the backend is given for creation ops. */
  readonly run: (inputs: Tensor[], backend: Backend) => Tensor;
  readonly tol: Tolerance;
  /** A fused op's composite path: also run on the tested backend and compared with `run`. */
  readonly composite?: (inputs: Tensor[], backend: Backend) => Tensor;
}

/** The cases of one op; each group becomes one test. */
export interface OpGroup {
  readonly op: string;
  readonly cases: readonly OpCase[];
}
