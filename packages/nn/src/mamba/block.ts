import { scope, type Tensor } from '@loom/tensor';
import type { SeedSequence } from '../init';
import { RMSNorm } from '../layers/norm';
import { Module } from '../module';
import type { MambaConfig } from './config';
import { MambaMixer } from './mixer';
import type { MambaLayerState } from './state';

/** One residual block of a Mamba model: x + mixer(RMSNorm(x)). */
export class MambaBlock extends Module {
  readonly mixer: MambaMixer;
  readonly norm: RMSNorm;

  constructor(config: MambaConfig, seeds: SeedSequence) {
    super();
    this.mixer = this.addChild('mixer', new MambaMixer(config, seeds));
    this.norm = this.addChild('norm', new RMSNorm(config.dim, config.normEps));
  }

  /** x [B, T, dim] -> [B, T, dim], from the start of a sequence. */
  forward(x: Tensor): Tensor {
    return scope(() => x.add(this.mixer.forward(this.norm.forward(x))));
  }

  /** x [B, T, dim] continuing from `state`; returns the output and the layer's next window and scan state. */
  forwardFrom(x: Tensor, state: MambaLayerState): { y: Tensor; conv: Tensor; ssm: Tensor } {
    return scope(() => {
      const out = this.mixer.forwardFrom(this.norm.forward(x), state);
      return { ...out, y: x.add(out.y) };
    });
  }
}
