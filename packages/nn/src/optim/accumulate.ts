import { keep, type Tensor } from '@loom/tensor';

/** Sums gradients over micro-batches and hands back their mean. */
export class GradAccumulator {
  #sum: Tensor[] | undefined;
  #count = 0;

  add(grads: readonly Tensor[]): void {
    if (!this.#sum) {
      this.#sum = grads.map((g) => keep(g.add(0)));
    } else {
      const sum = this.#sum;
      if (sum.length !== grads.length) {
        throw new Error(`GradAccumulator: expected ${sum.length} gradients, got ${grads.length}`);
      }
      this.#sum = sum.map((s, i) => {
        const next = keep(s.add(grads[i]));
        s.dispose();
        return next;
      });
    }
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  /** The mean gradients (the caller disposes them); the accumulator starts over. */
  take(): Tensor[] {
    if (!this.#sum) throw new Error('GradAccumulator.take: no gradients were added');
    const scale = 1 / this.#count;
    const mean = this.#sum.map((s) => keep(s.mul(scale)));
    for (const s of this.#sum) s.dispose();
    this.#sum = undefined;
    this.#count = 0;
    return mean;
  }
}
