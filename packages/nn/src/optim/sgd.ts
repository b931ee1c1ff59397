import { assign, keep, scope, type Tensor, zeros } from '@loom/tensor';
import type { Optimizer } from './optimizer';

export interface SGDOptions {
  readonly momentum?: number;
  readonly weightDecay?: number;
}

/** SGD with momentum: b ← μb + g (+ wd·p), p ← p - lr·b, for g the gradient times the step's gradScale. */
export class SGD implements Optimizer {
  readonly momentum: number;
  readonly weightDecay: number;
  #buffers: Tensor[] = [];
  #step = 0;

  constructor(options: SGDOptions = {}) {
    this.momentum = options.momentum ?? 0.9;
    this.weightDecay = options.weightDecay ?? 0;
  }

  get stepCount(): number {
    return this.#step;
  }

  step(params: readonly Tensor[], grads: readonly Tensor[], lr: number, gradScale = 1): void {
    if (params.length !== grads.length) {
      throw new Error(`SGD.step: got ${params.length} parameters but ${grads.length} gradients`);
    }
    if (this.#buffers.length === 0)
      this.#buffers = params.map((p) => keep(zeros(p.shape, { backend: p.backend })));
    this.#step++;
    params.forEach((p, i) => {
      scope(() => {
        const scaled = gradScale === 1 ? grads[i] : grads[i].mul(gradScale);
        const g = this.weightDecay > 0 ? scaled.add(p.mul(this.weightDecay)) : scaled;
        const b = this.#buffers[i].mul(this.momentum).add(g);
        assign(this.#buffers[i], b);
        assign(p, p.sub(b.mul(lr)));
      });
    });
  }

  state(): Map<string, Tensor> {
    return new Map(this.#buffers.map((t, i) => [`momentum.${i}`, t]));
  }

  loadState(state: ReadonlyMap<string, Tensor>, stepCount: number): void {
    this.dispose();
    this.#buffers = [...state.keys()].map((_, i) => {
      const t = state.get(`momentum.${i}`);
      if (!t) throw new Error(`SGD.loadState: missing momentum.${i} in the saved optimizer state`);
      return keep(t);
    });
    this.#step = stepCount;
  }

  dispose(): void {
    for (const t of this.#buffers) t.dispose();
    this.#buffers = [];
  }
}
