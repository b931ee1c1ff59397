import { valueAndGrad } from '@loom/autograd';
import { AdamW, readClipFactor } from '@loom/nn';
import type { Tensor } from '@loom/tensor';

/**
 * Training of one model by AdamW with a constant learning rate and gradients clipped at norm 1, in pieces:
 * `run(n)` takes the next n steps, so experiments can take turns between models (a slow moment of the
 * machine then hits every model alike).
 */
export class Fitter {
  readonly #optimizer = new AdamW({ weightDecay: 0.01 });
  #step = 0;
  #seconds = 0;

  /** `loss(step)`: the loss of training batch `step` (a scalar tensor), built while gradients are recorded. */
  constructor(
    readonly params: readonly Tensor[],
    readonly loss: (step: number) => Tensor,
    readonly lr: number,
  ) {}

  /** Steps taken so far. */
  get step(): number {
    return this.#step;
  }

  /** Wall time of the steps taken so far. */
  get seconds(): number {
    return this.#seconds;
  }

  /** Takes `steps` more steps; returns their mean training loss. */
  async run(steps: number): Promise<number> {
    const started = performance.now();
    let sum = 0;
    for (let i = 0; i < steps; i++, this.#step++) {
      const { value, grads } = valueAndGrad(() => this.loss(this.#step), this.params);
      const [loss] = await value.data();
      this.#optimizer.step(this.params, grads, this.lr, await readClipFactor(grads, 1));
      for (const t of [value, ...grads]) t.dispose();
      if (!Number.isFinite(loss)) {
        throw new Error(`Fitter: the loss became ${loss} at step ${this.#step}; lower the learning rate`);
      }
      sum += loss;
    }
    this.#seconds += (performance.now() - started) / 1000;
    return sum / steps;
  }

  dispose(): void {
    this.#optimizer.dispose();
  }
}

/** Options of `fit`: `steps` in all, `onProgress` told the mean training loss after every `every` of them. */
export interface FitOptions {
  readonly params: readonly Tensor[];
  readonly loss: (step: number) => Tensor;
  readonly steps: number;
  readonly lr: number;
  readonly every?: number;
  readonly onProgress?: (step: number, meanLoss: number) => void | Promise<void>;
}

/** Trains one model to the end in one go; returns the wall time its steps took. */
export async function fit(options: FitOptions): Promise<{ readonly seconds: number }> {
  const fitter = new Fitter(options.params, options.loss, options.lr);
  const every = options.every ?? 25;
  try {
    while (fitter.step < options.steps) {
      const loss = await fitter.run(Math.min(every, options.steps - fitter.step));
      await options.onProgress?.(fitter.step, loss);
    }
    return { seconds: fitter.seconds };
  } finally {
    fitter.dispose();
  }
}
