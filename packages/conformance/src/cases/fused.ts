import {
  type AnyFusedOp,
  type Backend,
  clone,
  concat,
  type FusedPath,
  fusedOps,
  type InputNames,
  REDUCTION,
  runFused,
  runFusedInPlace,
  scope,
  softmax,
  type Tensor,
  type TensorsOf,
} from '@loom/tensor';
import type { OpCase, OpGroup } from '../case';

/**
 * Runs `op` on the uploaded inputs by `path`; an in-place op's result is its f32 inputs after the update, flattened and
 * concatenated (the integer ones are codes a kernel only reads).
 */
function runOp(op: AnyFusedOp, params: readonly unknown[], path: FusedPath): (inputs: Tensor[]) => Tensor {
  return (inputs) => {
    if (inputs.length !== op.inputs.length) {
      throw new Error(
        `conformance: ${op.name} takes ${op.inputs.length} tensor inputs (${op.inputs.join(', ')}), its case gives ${inputs.length}`,
      );
    }
    if (op.kind === 'returns') return runFused(op, inputs as unknown as TensorsOf<InputNames>, params, path);
    return scope(() => {
      const updated = inputs.map((t) => clone(t));
      runFusedInPlace(op, updated as unknown as TensorsOf<InputNames>, params, path);
      return concat(
        updated.filter((t) => t.dtype === 'f32').map((t) => t.reshape([t.size])),
        0,
      );
    });
  };
}

/** The cases of one op of the table: each through the dispatcher, and again through its composite. */
function groupOf(op: AnyFusedOp): OpGroup {
  return {
    op: op.name,
    cases: op.cases.map(
      (c): OpCase => ({
        name: `${op.name} ${c.label}`,
        inputs: c.inputs,
        run: runOp(op, c.params, 'auto'),
        composite: runOp(op, c.params, 'composite'),
        tol: c.tol,
      }),
    ),
  };
}

/** Front-end cases beyond the kernels: softmax along an axis other than the last. */
const softmaxAxisGroup: OpGroup = {
  op: 'softmax (axis)',
  cases: [
    {
      name: 'softmax over axis 0 of [65, 3]',
      inputs: [{ shape: [65, 3] }],
      run: ([x]: Tensor[], _backend: Backend) => softmax(x, 0),
      tol: REDUCTION,
    },
  ],
};

/** One group per op of the fused-op table (`fusedOps`), from the cases its module declares. */
export const fusedGroups: OpGroup[] = [
  ...(Object.values(fusedOps) as AnyFusedOp[]).map(groupOf),
  softmaxAxisGroup,
];
