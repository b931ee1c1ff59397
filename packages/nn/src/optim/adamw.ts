import { adamw, keep, type Tensor, zeros } from '@loom/tensor';
import type { Optimizer } from './optimizer';

export interface AdamWOptions {
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
  /**
   * Which parameters decay; by default those of rank 2 or more (matrices and embeddings), not
   * norms and biases.
   */
  readonly decays?: (param: Tensor) => boolean;
}

/**
 * Adam with decoupled weight decay (Loshchilov & Hutter): p ← p(1 - lr·wd) - lr·m̂/(√v̂ + eps)
 * with bias-corrected moments m̂ = m/(1-β1ᵗ), v̂ = v/(1-β2ᵗ).
 */
export class AdamW implements Optimizer {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  readonly #decays: (param: Tensor) => boolean;
  #m: Tensor[] = [];
  #v: Tensor[] = [];
  #step = 0;

  constructor(options: AdamWOptions = {}) {
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0.01;
    this.#decays = options.decays ?? ((p) => p.rank >= 2);
  }

  get stepCount(): number {
    return this.#step;
  }

  step(params: readonly Tensor[], grads: readonly Tensor[], lr: number, gradScale = 1): void {
    if (params.length !== grads.length) {
      throw new Error(`AdamW.step: got ${params.length} parameters but ${grads.length} gradients`);
    }
    if (this.#m.length === 0) {
      this.#m = params.map((p) => keep(zeros(p.shape, { backend: p.backend })));
      this.#v = params.map((p) => keep(zeros(p.shape, { backend: p.backend })));
    }
    this.#step++;
    const c1 = 1 - this.beta1 ** this.#step;
    const c2 = 1 - this.beta2 ** this.#step;
    params.forEach((p, i) => {
      const weightDecay = this.#decays(p) ? this.weightDecay : 0;
      adamw(p, grads[i], this.#m[i], this.#v[i], {
        lr,
        beta1: this.beta1,
        beta2: this.beta2,
        eps: this.eps,
        weightDecay,
        c1,
        c2,
        gradScale,
      });
    });
  }

  state(): Map<string, Tensor> {
    return new Map([
      ...this.#m.map((t, i): [string, Tensor] => [`m.${i}`, t]),
      ...this.#v.map((t, i): [string, Tensor] => [`v.${i}`, t]),
    ]);
  }

  loadState(state: ReadonlyMap<string, Tensor>, stepCount: number): void {
    this.dispose();
    const count = [...state.keys()].filter((k) => k.startsWith('m.')).length;
    const get = (key: string): Tensor => {
      const t = state.get(key);
      if (!t) throw new Error(`AdamW.loadState: missing ${key} in the saved optimizer state`);
      return keep(t);
    };
    this.#m = Array.from({ length: count }, (_, i) => get(`m.${i}`));
    this.#v = Array.from({ length: count }, (_, i) => get(`v.${i}`));
    this.#step = stepCount;
  }

  dispose(): void {
    for (const t of [...this.#m, ...this.#v]) t.dispose();
    this.#m = [];
    this.#v = [];
  }
}
