import { arange, concat, full, scatterAdd, scope, type Tensor, where } from '@loom/tensor';

/** Where each (token, choice) goes: a row of one expert's batch, or nowhere when that expert is full. */
export interface Dispatch {
  /** Token of each expert row, i32 [E·C]; rows E·e .. are expert e's, -1 marks an empty row. */
  readonly slotTokens: Tensor;
  /** Gate of each expert row, [E·C, 1]; 0 on empty rows. */
  readonly slotGates: Tensor;
  /** Assignments per expert before capacity, [E] (counts as f32): the load. */
  readonly load: Tensor;
  /** Assignments dropped because their expert was full, a scalar count (f32). */
  readonly dropped: Tensor;
}

/** Inclusive running sum down axis 0 of x [A, E] in log2(A) shifted adds (Hillis–Steele), no [A, A] matrix. */
function cumulativeSum(x: Tensor): Tensor {
  const [a, e] = x.shape;
  let sum = x;
  for (let shift = 1; shift < a; shift *= 2) {
    const zeros = full([shift, e], 0, { backend: x.backend });
    sum = sum.add(concat([zeros, sum.slice([0, 0], [a - shift, e])], 0)); // [A, E]
  }
  return sum;
}

/**
 * Groups tokens by expert with a fixed capacity C per expert (GShard/Switch dispatch, every shape static so no
 * value is read back): assignment a = (token, choice) in token order takes the next free row of its expert; once
 * C rows are taken, later assignments to that expert are dropped. `choices` [N, k, E] one-hot, `gates` [N, k].
 */
export function dispatch(choices: Tensor, gates: Tensor, capacity: number): Dispatch {
  return scope(() => {
    const [n, k, e] = choices.shape;
    const assignments = n * k;
    const flat = choices.reshape([assignments, e]); // [A, E]
    const rank = cumulativeSum(flat).mul(flat).sum(-1).sub(1); // [A]: 0-based row within its expert
    const expert = flat.mul(arange(e, 0, 1, { backend: flat.backend })).sum(-1); // [A]
    const kept = rank.lt(capacity); // [A] i32
    const slot = where(kept, expert.mul(capacity).add(rank), -1).cast('i32'); // [A]
    const token = arange(n, 0, 1, { backend: flat.backend })
      .reshape([n, 1])
      .add(full([n, k], 0, { backend: flat.backend })); // [N, k]
    const rows = e * capacity;
    const slotTokens = scatterAdd(token.add(1).reshape([assignments, 1]), slot, rows) // [E·C, 1]
      .sub(1)
      .reshape([rows])
      .cast('i32');
    const slotGates = scatterAdd(gates.reshape([assignments, 1]), slot, rows); // [E·C, 1]
    const load = flat.sum(0); // [E]
    const dropped = kept.cast('f32').sum().neg().add(assignments);
    return { slotTokens, slotGates, load, dropped };
  });
}
