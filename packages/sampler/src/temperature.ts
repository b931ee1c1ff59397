import { argmax } from './greedy';
import { maxLogit } from './softmax';
import { checkNumber } from './validate';

/** Checks a temperature: a finite number ≥ 0. */
export function checkTemperature(temperature: unknown): number {
  return checkNumber('temperature', temperature, { min: 0, max: Number.POSITIVE_INFINITY }, '0 means greedy');
}

/**
 * Temperature scaling, in place. T > 0 maps each logit to (logit - max) / T: the same
 * distribution as logit / T (softmax ignores a shift) that cannot overflow for tiny T.
 * T = 0 is greedy: every token but the argmax (lowest id among ties) becomes -Infinity.
 * Returns `logits`.
 */
export function applyTemperature(logits: Float32Array, temperature: number): Float32Array {
  checkTemperature(temperature);
  if (temperature === 0) {
    const best = argmax(logits);
    for (let i = 0; i < logits.length; i++) {
      if (i !== best) logits[i] = Number.NEGATIVE_INFINITY;
    }
    return logits;
  }
  if (temperature === 1) return logits;
  const max = maxLogit(logits);
  for (let i = 0; i < logits.length; i++) logits[i] = (logits[i] - max) / temperature;
  return logits;
}
