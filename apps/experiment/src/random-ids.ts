import { Rng } from '@loom/sampler';

/** `count` token ids drawn uniformly from [0, vocab) by a seeded generator (for timing untrained models). */
export function randomIds(count: number, vocab: number, seed: number): Int32Array {
  const rng = new Rng(seed);
  return Int32Array.from({ length: count }, () => rng.nextUint32() % vocab);
}
