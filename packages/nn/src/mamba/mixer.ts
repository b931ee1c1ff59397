import { assign, scope, selectiveScan, type Tensor } from '@loom/tensor';
import { constantInit, type SeedSequence } from '../init';
import { Linear } from '../layers/linear';
import { Module } from '../module';
import { innerDim, type MambaConfig } from './config';
import { causalConv } from './conv';
import { aLogInit, dtBiasInit, uniformInit } from './init';
import { scanFrom } from './scan-state';
import type { MambaLayerState } from './state';

/** log(1 + exp(v)) without overflow: max(v, 0) + log(1 + exp(-|v|)). */
function softplus(v: Tensor): Tensor {
  return v.maximum(0).add(v.abs().neg().exp().add(1).log());
}

/** The scan's inputs computed from the mixer's input, before the scan itself. */
interface ScanInputs {
  readonly x: Tensor; // [B, T, E], after the convolution and SiLU
  readonly delta: Tensor; // [B, T, E]
  readonly a: Tensor; // [E, N]
  readonly b: Tensor; // [B, T, N]
  readonly c: Tensor; // [B, T, N]
  readonly z: Tensor; // [B, T, E], the gate's input
  readonly window: Tensor; // [B, W - 1, E], the convolution's next window
}

/**
 * Mamba's mixer (the selective SSM block): in_proj to 2·inner (x and the gate z), a causal
 * depthwise conv1d over x, SiLU, x_proj to (Δ of rank R, B, C), dt_proj + softplus to the
 * step sizes Δ, the selective scan with A = -exp(A_log) and the skip D, the gate SiLU(z),
 * out_proj back to dim. Initialised as Mamba: A = -[1..N] per channel, D = 1, dt_proj's bias
 * softplus⁻¹ of steps log-uniform in [0.001, 0.1], dt_proj's weight uniform ±R^-½, the
 * convolution uniform ±W^-½ (PyTorch's Conv1d default); the other projections normal with
 * PyTorch's default variance 1/(3·fan_in), out_proj's scaled by 1/√numLayers (Mamba's
 * rescale of the residual projections).
 */
export class MambaMixer extends Module {
  readonly inProj: Linear;
  readonly convWeight: Tensor;
  readonly convBias: Tensor;
  readonly xProj: Linear;
  readonly dtProj: Linear;
  readonly aLog: Tensor;
  readonly dSkip: Tensor;
  readonly outProj: Linear;

  constructor(
    readonly config: MambaConfig,
    seeds: SeedSequence,
  ) {
    super();
    const { dim, stateSize: n, convWidth: w, dtRank: r, numLayers } = config;
    const e = innerDim(config);
    const fanInStd = (fanIn: number) => 1 / Math.sqrt(3 * fanIn);
    this.inProj = this.addChild(
      'in_proj',
      new Linear(dim, 2 * e, { bias: false, std: fanInStd(dim), seed: seeds.next() }),
    );
    this.convWeight = this.addParam(
      'conv1d.weight',
      uniformInit([e, w], 1 / Math.sqrt(w), seeds.next(), this.backend),
    );
    this.convBias = this.addParam(
      'conv1d.bias',
      uniformInit([e], 1 / Math.sqrt(w), seeds.next(), this.backend),
    );
    this.xProj = this.addChild(
      'x_proj',
      new Linear(e, r + 2 * n, { bias: false, std: fanInStd(e), seed: seeds.next() }),
    );
    this.dtProj = this.addChild('dt_proj', new Linear(r, e, { bias: true, std: 0, seed: 0 }));
    scope(() => {
      assign(this.dtProj.weight, uniformInit([e, r], 1 / Math.sqrt(r), seeds.next(), this.backend));
      if (this.dtProj.bias) assign(this.dtProj.bias, dtBiasInit(e, seeds.next(), this.backend));
    });
    this.aLog = this.addParam('A_log', aLogInit(e, n, this.backend));
    this.dSkip = this.addParam('D', constantInit([e], 1, this.backend));
    this.outProj = this.addChild(
      'out_proj',
      new Linear(e, dim, { bias: false, std: fanInStd(e) / Math.sqrt(numLayers), seed: seeds.next() }),
    );
  }

  /** u [B, T, dim] -> [B, T, dim], from the start of a sequence (training, scoring). */
  forward(u: Tensor): Tensor {
    return scope(() => {
      const s = this.#scanInputs(u);
      return this.#finish(selectiveScan(s.x, s.delta, s.a, s.b, s.c, this.dSkip), s.z);
    });
  }

  /**
   * u [B, T, dim] continuing from `state` (a window and a scan state): the output [B, T, dim]
   * and the window and scan state after the last step, to store back.
   */
  forwardFrom(u: Tensor, state: MambaLayerState): { y: Tensor; conv: Tensor; ssm: Tensor } {
    return scope(() => {
      const s = this.#scanInputs(u, state.conv);
      const { y, h } = scanFrom(s.x, s.delta, s.a, s.b, s.c, this.dSkip, state.ssm);
      return { y: this.#finish(y, s.z), conv: s.window, ssm: h };
    });
  }

  #scanInputs(u: Tensor, window?: Tensor): ScanInputs {
    const [batch, steps] = u.shape;
    const { stateSize: n, dtRank: r } = this.config;
    const e = innerDim(this.config);
    const xz = this.inProj.forward(u); // [B, T, 2E]
    const conv = causalConv(xz.slice([0, 0, 0], [batch, steps, e]), this.convWeight, this.convBias, window);
    const x = conv.y.silu(); // [B, T, E]
    const dbc = this.xProj.forward(x); // [B, T, R + 2N]
    const delta = softplus(this.dtProj.forward(dbc.slice([0, 0, 0], [batch, steps, r]))); // [B, T, E]
    return {
      x,
      delta,
      a: this.aLog.exp().neg(), // [E, N]
      b: dbc.slice([0, 0, r], [batch, steps, n]),
      c: dbc.slice([0, 0, r + n], [batch, steps, n]),
      z: xz.slice([0, 0, e], [batch, steps, e]),
      window: conv.window,
    };
  }

  /** The scan's output y [B, T, E] gated by SiLU(z) and projected to [B, T, dim]. */
  #finish(y: Tensor, z: Tensor): Tensor {
    return this.outProj.forward(y.mul(z.silu()));
  }
}
