import { type Backend, full, randn, scope, type Tensor } from '@loom/tensor';

/** Normal(0, std) values from a seeded draw; std 0 gives zeros without drawing. */
export function normalInit(shape: readonly number[], std: number, seed: number, backend: Backend): Tensor {
  if (std === 0) return full(shape, 0, { backend });
  return scope(() => randn(shape, { seed, backend }).mul(std));
}

export function constantInit(shape: readonly number[], value: number, backend: Backend): Tensor {
  return full(shape, value, { backend });
}

/** Seeds for successive parameters, derived from one base seed. */
export class SeedSequence {
  #next: number;

  constructor(seed: number) {
    this.#next = seed >>> 0;
  }

  next(): number {
    this.#next = (Math.imul(this.#next, 1_664_525) + 1_013_904_223) >>> 0;
    return this.#next;
  }
}
