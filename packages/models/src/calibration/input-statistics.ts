import type { Linear, TransformerLM } from '@loom/nn';
import { keep, matmul, scope, type Tensor, tensor } from '@loom/tensor';
import { linearsByWeightName } from '../quantize-model';

/**
 * The second moments of a linear layer's inputs over calibration text, the weighting of its rounding errors that
 * `quantizeCalibrated` minimises: the error of an output is e·x for a weight row error e, whose mean square over
 * the inputs is e M eᵀ with M = E[x xᵀ]. `full` holds M [size, size]; `diagonal` only its diagonal E[x_i²] [size]
 * (for wide inputs, whose full matrix would cost size² memory and size³ to factorise).
 */
export interface InputStatistics {
  readonly kind: 'full' | 'diagonal';
  /** The layer's input features. */
  readonly size: number;
  /** Input rows (tokens) the moments are the mean over. */
  readonly rows: number;
  /** M row-major [size, size] (full) or its diagonal [size]. */
  readonly moments: Float64Array;
}

/** Inputs of at most this many features get their full second moments; wider ones the diagonal. */
export const FULL_MOMENTS_MAX_FEATURES = 1024;

/** The running sums of one input: Σ x xᵀ [size, size] or Σ x² [size], on the model's backend. */
interface Accumulator {
  readonly size: number;
  sums: Tensor | undefined;
  rows: number;
}

function accumulate(into: Accumulator, x: Tensor): void {
  const rows = x.shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const next = scope(() => {
    const flat = x.reshape([rows, into.size]); // [rows, size]
    const part =
      into.size <= FULL_MOMENTS_MAX_FEATURES
        ? matmul(flat, flat, { transA: true }) // [size, size]
        : flat.mul(flat).sum(0); // [size]
    return into.sums === undefined ? part : into.sums.add(part);
  });
  into.sums?.dispose();
  into.sums = keep(next);
  into.rows += rows;
}

/**
 * Runs `model` over `sequences` (token ids, all of one length, as one batch) and returns the input statistics of
 * every Linear by the name of its weight (`layers.0.attention.wq.weight`). Layers that read the same input tensor
 * (a block's q, k and v projections) share one statistics object.
 */
export async function collectInputStatistics(
  model: TransformerLM,
  sequences: readonly (readonly number[])[],
): Promise<Map<string, InputStatistics>> {
  const length = sequences[0]?.length ?? 0;
  if (length === 0 || sequences.some((s) => s.length !== length)) {
    throw new Error(
      `collectInputStatistics: expected sequences of one non-zero length, got lengths ${sequences.map((s) => s.length).join(', ')}`,
    );
  }
  const linears = linearsByWeightName(model);
  const byInput = new Map<Tensor, Accumulator>();
  const ofLinear = new Map<Linear, Accumulator>();
  for (const linear of linears.values()) {
    linear.inputObserver = (x) => {
      const shared = byInput.get(x);
      const acc = shared ?? ofLinear.get(linear) ?? { size: linear.inFeatures, sums: undefined, rows: 0 };
      ofLinear.set(linear, acc);
      if (shared === undefined) {
        accumulate(acc, x);
        byInput.set(x, acc);
      }
    };
  }
  try {
    const ids = tensor(Int32Array.from(sequences.flat()), [sequences.length, length], {
      backend: model.backend,
    }); // [S, L]
    scope(() => model.forward(ids)).dispose();
    ids.dispose();
  } finally {
    for (const linear of linears.values()) linear.inputObserver = undefined;
  }
  const statistics = new Map<Accumulator, InputStatistics>();
  const out = new Map<string, InputStatistics>();
  for (const [name, linear] of linears) {
    const acc = ofLinear.get(linear);
    if (acc?.sums === undefined) continue;
    let stats = statistics.get(acc);
    if (stats === undefined) {
      const sums = await acc.sums.float32Data();
      stats = {
        kind: acc.size <= FULL_MOMENTS_MAX_FEATURES ? 'full' : 'diagonal',
        size: acc.size,
        rows: acc.rows,
        moments: Float64Array.from(sums, (v) => v / acc.rows),
      };
      statistics.set(acc, stats);
    }
    out.set(name, stats);
  }
  for (const acc of new Set(ofLinear.values())) acc.sums?.dispose();
  return out;
}
