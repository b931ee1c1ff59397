import { scope, tensor } from '@loom/tensor';
import type { CrossKVCache } from './cross-cache';
import { checkMaxLength, type Hypothesis, logSoftmaxRows } from './hypothesis';
import type { EncoderDecoder } from './model';
import type { Seq2SeqTokens } from './teacher-forcing';

/** A finished beam: its tokens, summed log-probability and the length-normalised score beams are ranked by. */
export interface ScoredHypothesis extends Hypothesis {
  /** logProb / length^lengthPenalty, length counting the EOS. */
  readonly score: number;
}

/** How beam search generates. */
export interface BeamOptions {
  readonly special: Seq2SeqTokens;
  /** Hypotheses kept per step (1 is greedy decoding). */
  readonly beamWidth: number;
  /** Most tokens generated, the EOS included. */
  readonly maxLength: number;
  /** Exponent α of the length normalisation logProb / length^α; 0 ranks by summed log-probability (default 0). */
  readonly lengthPenalty?: number;
}

/**
 * Log-probabilities (float64, one row of width vocab per prefix) of the token after each prefix; every prefix
 * starts with BOS and all have the same length.
 */
export type NextTokenLogProbs = (
  prefixes: readonly (readonly number[])[],
) => Promise<readonly Float64Array[]>;

interface Beam {
  readonly tokens: readonly number[];
  readonly logProb: number;
}

function checkBeamOptions(options: BeamOptions): number {
  const { beamWidth, lengthPenalty = 0 } = options;
  if (!Number.isInteger(beamWidth) || beamWidth < 1) {
    throw new Error(`beamSearch: beamWidth must be a positive integer, got ${beamWidth}`);
  }
  if (!(lengthPenalty >= 0 && Number.isFinite(lengthPenalty))) {
    throw new Error(`beamSearch: lengthPenalty must be a finite number ≥ 0, got ${lengthPenalty}`);
  }
  return lengthPenalty;
}

/**
 * Beam search over any next-token distribution. Each step extends every live beam by every token and ranks
 * the extensions by summed log-probability; an extension ending in EOS among the best `beamWidth` becomes a
 * finished hypothesis, and the best `beamWidth` others stay live. It stops when no live beam can still beat
 * the worst of `beamWidth` finished ones (exact: log-probabilities only fall as a beam grows, so
 * logProb / maxLength^α bounds a live beam's best finish), or after maxLength steps, when live beams finish
 * without EOS. Returns up to beamWidth hypotheses, best score first.
 */
export async function beamSearchWith(
  next: NextTokenLogProbs,
  options: BeamOptions,
): Promise<ScoredHypothesis[]> {
  const alpha = checkBeamOptions(options);
  const { beamWidth: k, maxLength } = options;
  const { bos, eos } = options.special;
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new Error(`beamSearch: maxLength must be a positive integer, got ${maxLength}`);
  }
  const scoreOf = (logProb: number, length: number) => logProb / length ** alpha;
  const finished: ScoredHypothesis[] = [];
  const finish = (beam: Beam, ended: boolean) => {
    const length = beam.tokens.length + (ended ? 1 : 0);
    finished.push({ ...beam, ended, score: scoreOf(beam.logProb, length) });
    finished.sort((a, b) => b.score - a.score);
  };
  let live: Beam[] = [{ tokens: [], logProb: 0 }];
  for (let step = 0; step < maxLength && live.length > 0; step++) {
    const rows = await next(live.map((beam) => [bos, ...beam.tokens]));
    const extensions = live.flatMap((beam, i) =>
      Array.from(rows[i], (logp, token) => ({ beam: i, token, logProb: beam.logProb + logp })),
    );
    extensions.sort((a, b) => b.logProb - a.logProb || a.beam - b.beam || a.token - b.token);
    const kept: Beam[] = [];
    for (const [rank, e] of extensions.entries()) {
      if (kept.length === k && rank >= k) break;
      const parent = live[e.beam];
      if (e.token === eos) {
        if (rank < k) finish({ tokens: parent.tokens, logProb: e.logProb }, true);
      } else if (kept.length < k && e.logProb > Number.NEGATIVE_INFINITY) {
        kept.push({ tokens: [...parent.tokens, e.token], logProb: e.logProb });
      }
    }
    live = kept;
    const worstKept = finished.length >= k ? finished[k - 1].score : Number.NEGATIVE_INFINITY;
    if (live.every((beam) => scoreOf(beam.logProb, maxLength) <= worstKept)) live = [];
  }
  for (const beam of live) finish(beam, false);
  return finished.slice(0, k);
}

/**
 * Beam search for one source with an encoder–decoder. The source is encoded and its cross-attention keys and
 * values projected once; the cache is repeated (not re-projected) to the number of live beams. Beams are
 * reordered every step, so each step runs the decoder over the whole prefix of each beam (short targets).
 */
export async function beamSearch(
  model: EncoderDecoder,
  source: readonly number[],
  options: BeamOptions,
): Promise<ScoredHypothesis[]> {
  checkBeamOptions(options);
  checkMaxLength('beamSearch', options.maxLength, model.config.maxSeqLen);
  const { vocabSize } = model.config;
  const cross = model.sourceCache([source], options.special.pad);
  const repeated = new Map<number, CrossKVCache>([[1, cross]]);
  const crossFor = (rows: number) => {
    const known = repeated.get(rows);
    if (known) return known;
    const made = cross.repeat(rows);
    repeated.set(rows, made);
    return made;
  };
  const next: NextTokenLogProbs = async (prefixes) => {
    const n = prefixes.length;
    const t = prefixes[0].length;
    const last = scope(() => {
      const ids = tensor(Int32Array.from(prefixes.flat()), [n, t], { backend: model.backend, dtype: 'i32' });
      return model.decode(ids, crossFor(n)).slice([0, t - 1, 0], [n, 1, vocabSize]); // [n, 1, V]
    });
    const data = await last.data();
    last.dispose();
    return logSoftmaxRows(data, n, vocabSize);
  };
  try {
    return await beamSearchWith(next, options);
  } finally {
    for (const c of repeated.values()) c.dispose();
  }
}
