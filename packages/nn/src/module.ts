import {
  assign,
  type Backend,
  getBackend,
  type HostArray,
  keep,
  showShape,
  type Tensor,
  tensor,
} from '@loom/tensor';

/**
 * A layer or model: named parameters and named child modules. Names join with dots, so a
 * model's state dict reads `layers.0.attention.wq.weight`. Parameters live outside scopes
 * (they are kept) and are updated in place by optimizers, so references stay valid.
 */
export abstract class Module {
  readonly #params = new Map<string, Tensor>();
  readonly #children = new Map<string, Module>();
  #training = true;

  constructor(readonly backend: Backend = getBackend()) {}

  protected addParam(name: string, t: Tensor): Tensor {
    if (this.#params.has(name)) throw new Error(`Module: parameter ${name} is already registered`);
    this.#params.set(name, keep(t));
    return t;
  }

  protected addChild<M extends Module>(name: string, m: M): M {
    this.#children.set(name, m);
    return m;
  }

  /** Every parameter with its dotted name, in registration order. */
  namedParameters(prefix = ''): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [name, t] of this.#params) out.push([prefix + name, t]);
    for (const [name, child] of this.#children) out.push(...child.namedParameters(`${prefix}${name}.`));
    return out;
  }

  /** This module and every module below it, depth first. */
  *modules(): Generator<Module> {
    yield this;
    for (const child of this.#children.values()) yield* child.modules();
  }

  parameters(): Tensor[] {
    return this.namedParameters().map(([, t]) => t);
  }

  /** Number of weights this module holds: the elements of every parameter. */
  weightCount(): number {
    return this.parameters().reduce((n, p) => n + p.size, 0);
  }

  /** Name to parameter, the keys checkpoint formats use. */
  stateDict(): Map<string, Tensor> {
    return new Map(this.namedParameters());
  }

  /**
   * Copies values into the parameters. Every parameter must be given with its exact shape and
   * no unknown name may appear; otherwise nothing is copied and the error lists every problem.
   * A disposed parameter (a layer that reads a compact copy only, see `Linear.releaseWeight`) needs no values, and
   * values given for it are not copied.
   */
  loadStateDict(
    values: ReadonlyMap<string, { readonly shape: readonly number[]; readonly data: HostArray }>,
  ): void {
    const params = this.stateDict();
    const missing = [...params].filter(([k, p]) => !p.isDisposed && !values.has(k)).map(([k]) => k);
    const unexpected = [...values.keys()].filter((k) => !params.has(k));
    const mismatched = [...params].flatMap(([k, p]) => {
      const v = values.get(k);
      const same = v && v.shape.length === p.rank && v.shape.every((d, i) => d === p.shape[i]);
      return v && !same ? [`${k}: expected ${showShape(p.shape)}, got ${showShape(v.shape)}`] : [];
    });
    if (missing.length + unexpected.length + mismatched.length > 0) {
      const parts = [
        missing.length ? `missing: ${missing.join(', ')}` : '',
        unexpected.length ? `unexpected: ${unexpected.join(', ')}` : '',
        mismatched.length ? `wrong shape: ${mismatched.join('; ')}` : '',
      ].filter(Boolean);
      throw new Error(`loadStateDict: the weights do not fit this model (${parts.join(' | ')})`);
    }
    for (const [k, p] of params) {
      const v = values.get(k);
      if (!v || p.isDisposed) continue;
      const t = tensor(v.data, v.shape, { backend: p.backend, dtype: p.dtype });
      assign(p, t);
      t.dispose();
    }
  }

  get training(): boolean {
    return this.#training;
  }

  /** Switches training behaviour (dropout) on or off for this module and its children. */
  train(mode = true): this {
    this.#training = mode;
    for (const child of this.#children.values()) child.train(mode);
    return this;
  }

  eval(): this {
    return this.train(false);
  }

  /** Frees every parameter. */
  dispose(): void {
    for (const t of this.#params.values()) t.dispose();
    for (const child of this.#children.values()) child.dispose();
  }
}
