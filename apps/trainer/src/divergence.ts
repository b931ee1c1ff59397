/**
 * A loss (mean cross-entropy, in nats) above this many times ln(vocabulary size) means the run has diverged.
 * ln(V) is the loss of a uniform guess, which is where training starts; a loss ten times that gives the right
 * token a probability of V^-10 on average — a model that no learning-rate spike leaves, and not worth saving.
 */
export const DIVERGED_FACTOR = 10;

/**
 * What is wrong with `loss` of a model over `vocabSize` tokens ("is NaN", "is 3.22e+12, above 10 × ln(51) = 39.3: …"),
 * or undefined when it is finite and within DIVERGED_FACTOR × ln(vocabSize).
 */
export function lossProblem(loss: number, vocabSize: number): string | undefined {
  if (!Number.isFinite(loss)) return `is ${loss}`;
  const bound = DIVERGED_FACTOR * Math.log(vocabSize);
  if (loss <= bound) return undefined;
  return `is ${loss.toPrecision(3)}, above ${DIVERGED_FACTOR} × ln(${vocabSize}) = ${bound.toPrecision(3)}: the run has diverged`;
}
