import { type Backend, getBackend, type Tensor, tensor } from '@loom/tensor';

/** The ids a seq2seq vocabulary reserves. */
export interface Seq2SeqTokens {
  /** Starts every decoder input. */
  readonly bos: number;
  /** Ends every target; generation stops at it. */
  readonly eos: number;
  /** Fills decoder inputs past a target's end. */
  readonly pad: number;
}

/** The label softmaxCrossEntropy skips: padding positions contribute nothing to the loss. */
export const IGNORE_INDEX = -100;

/** A teacher-forced batch: decoder inputs and the labels each position predicts, both i32 [B, T]. */
export interface TeacherForcedBatch {
  /** [BOS, y1, ..., yn, PAD, ...]. */
  readonly inputs: Tensor;
  /** [y1, ..., yn, EOS, IGNORE, ...]: the inputs shifted left by one. */
  readonly labels: Tensor;
}

/**
 * Builds the decoder side of a training batch from target sequences (without BOS or EOS): each input row is
 * BOS then the target, each label row the target then EOS, so position i predicts token i + 1; rows shorter
 * than the longest are padded with `pad` in the inputs and IGNORE_INDEX in the labels. T = longest + 1.
 */
export function teacherForcing(
  targets: readonly (readonly number[])[],
  special: Seq2SeqTokens,
  backend: Backend = getBackend(),
): TeacherForcedBatch {
  if (targets.length === 0)
    throw new Error('teacherForcing: expected at least one target sequence, got none');
  const t = Math.max(...targets.map((row) => row.length)) + 1;
  const inputs = new Int32Array(targets.length * t).fill(special.pad);
  const labels = new Int32Array(targets.length * t).fill(IGNORE_INDEX);
  targets.forEach((row, b) => {
    const bad = row.findIndex((id) => !Number.isInteger(id) || id < 0 || id === special.eos);
    if (bad >= 0) {
      throw new Error(
        `teacherForcing: target ${b} token ${bad} is ${row[bad]}; give non-negative ids without EOS (it is appended)`,
      );
    }
    inputs[b * t] = special.bos;
    row.forEach((id, i) => {
      inputs[b * t + i + 1] = id;
      labels[b * t + i] = id;
    });
    labels[b * t + row.length] = special.eos;
  });
  const shape = [targets.length, t];
  return {
    inputs: tensor(inputs, shape, { backend, dtype: 'i32' }),
    labels: tensor(labels, shape, { backend, dtype: 'i32' }),
  };
}

/** Sources as i32 [B, S], right-padded to the longest, and each row's length (the attention key lengths). */
export interface SourceBatch {
  readonly ids: Tensor;
  readonly lengths: readonly number[];
}

/** Pads sources (token ids, at least one each) with `pad` to the longest: the encoder side of a batch. */
export function sourceBatch(
  sources: readonly (readonly number[])[],
  pad: number,
  backend: Backend = getBackend(),
): SourceBatch {
  if (sources.length === 0) throw new Error('sourceBatch: expected at least one source, got none');
  const empty = sources.findIndex((row) => row.length === 0);
  if (empty >= 0)
    throw new Error(`sourceBatch: source ${empty} is empty; give every source at least one token`);
  const s = Math.max(...sources.map((row) => row.length));
  const ids = new Int32Array(sources.length * s).fill(pad);
  for (const [b, row] of sources.entries()) ids.set(row, b * s);
  return {
    ids: tensor(ids, [sources.length, s], { backend, dtype: 'i32' }),
    lengths: sources.map((row) => row.length),
  };
}

/** A training batch of an encoder–decoder. */
export interface Seq2SeqBatch extends TeacherForcedBatch {
  readonly source: SourceBatch;
}

/** The source and teacher-forced target sides of a batch of (source, target) pairs; see `teacherForcing`. */
export function seq2seqBatch(
  pairs: readonly { readonly source: readonly number[]; readonly target: readonly number[] }[],
  special: Seq2SeqTokens,
  backend: Backend = getBackend(),
): Seq2SeqBatch {
  return {
    source: sourceBatch(
      pairs.map((p) => p.source),
      special.pad,
      backend,
    ),
    ...teacherForcing(
      pairs.map((p) => p.target),
      special,
      backend,
    ),
  };
}

/** Frees a batch's tensors. */
export function disposeBatch(batch: Seq2SeqBatch): void {
  for (const t of [batch.source.ids, batch.inputs, batch.labels]) t.dispose();
}
