import { assign, type Backend, keep, type Tensor, zeros } from '@loom/tensor';
import { innerDim, type MambaConfig } from './config';

/** One block's part of the state: the convolution's window and the scan's state. */
export interface MambaLayerState {
  /** The last convWidth - 1 inputs of the convolution, [B, convWidth - 1, inner]. */
  readonly conv: Tensor;
  /** The scan's state h, [B, inner, stateSize]. */
  readonly ssm: Tensor;
}

/**
 * What a MambaLM carries between tokens while generating: per block a convolution window and
 * a scan state, of a fixed size whatever the sequence's length (a transformer's KV cache grows
 * by a row per token). Updated in place; lives outside scopes, so dispose it when done.
 */
export class MambaState {
  readonly layers: readonly MambaLayerState[];
  #tokens = 0;

  constructor(
    readonly config: MambaConfig,
    readonly batch: number,
    backend: Backend,
  ) {
    if (!Number.isInteger(batch) || batch < 1) {
      throw new Error(`MambaState: batch must be a positive integer, got ${batch}`);
    }
    const e = innerDim(config);
    this.layers = Array.from({ length: config.numLayers }, () => ({
      conv: keep(zeros([batch, config.convWidth - 1, e], { backend })),
      ssm: keep(zeros([batch, e, config.stateSize], { backend })),
    }));
  }

  /** Tokens consumed since creation or the last reset. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Bytes the state holds (float32), the same after any number of tokens. */
  get bytes(): number {
    return this.layers.reduce((sum, l) => sum + 4 * (l.conv.size + l.ssm.size), 0);
  }

  /** Replaces layer `i`'s window and state with new values of the same shapes, in place. */
  update(i: number, conv: Tensor, ssm: Tensor): void {
    assign(this.layers[i].conv, conv);
    assign(this.layers[i].ssm, ssm);
  }

  /** Counts `steps` more tokens consumed. */
  advance(steps: number): void {
    this.#tokens += steps;
  }

  /** Back to the start of a sequence: zeros everywhere. */
  reset(): void {
    for (const l of this.layers) {
      for (const t of [l.conv, l.ssm]) {
        const z = zeros(t.shape, { backend: t.backend });
        assign(t, z);
        z.dispose();
      }
    }
    this.#tokens = 0;
  }

  dispose(): void {
    for (const l of this.layers) {
      l.conv.dispose();
      l.ssm.dispose();
    }
  }
}
