import { mix32, uniformAt } from '@loom/tensor';

/**
 * Independent random streams of one run, so that e.g. the data order does not change when
 * sampling settings do.
 */
export const Stream = {
  trainBatches: 0x74726169,
  evalTrain: 0x65767472,
  evalVal: 0x6576766c,
  sample: 0x73616d70,
  stories: 0x73746f72,
  masking: 0x6d61736b,
  classify: 0x636c6173,
} as const;

export type StreamName = keyof typeof Stream;

/**
 * The seed of item `index` (a step, a batch) of a stream: a pure function of its arguments,
 * so anything drawn from it can be redrawn after a restart.
 */
export function keyedSeed(seed: number, stream: StreamName, index: number): number {
  const base = mix32((seed ^ Stream[stream]) >>> 0);
  return mix32((base + Math.imul(index + 1, 0x9e3779b1)) >>> 0);
}

/** Uniform integer in [0, n) from counters 2c and 2c+1 of a keyed seed (48 random bits, so n may be large). */
export function randomInt(key: number, counter: number, n: number): number {
  const hi = Math.floor(uniformAt(key, 2 * counter) * 2 ** 24);
  const lo = Math.floor(uniformAt(key, 2 * counter + 1) * 2 ** 24);
  return Math.floor(((hi * 2 ** 24 + lo) / 2 ** 48) * n);
}

/** A sequence of uniform draws in (0, 1) from one seed: counter-based, so its position is one number. */
export class CounterRng {
  #counter = 0;

  constructor(readonly seed: number) {}

  next(): number {
    return uniformAt(this.seed, this.#counter++);
  }

  /** Integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('CounterRng.pick: expected at least one item, got none');
    return items[this.below(items.length)];
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}
