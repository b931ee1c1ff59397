/**
 * Why a generation ended:
 * - `eos`: an end-of-sequence token was sampled;
 * - `stop-string`: the text reached one of the stop strings;
 * - `max-tokens`: the maximum number of new tokens was generated;
 * - `repetition`: the same token came N times in a row;
 * - `aborted`: the caller cancelled (e.g. an `AbortSignal`), reported by the caller;
 * - `context-full`: the model has no positions left, reported by the caller.
 */
export type StopReason = 'eos' | 'stop-string' | 'max-tokens' | 'repetition' | 'aborted' | 'context-full';
