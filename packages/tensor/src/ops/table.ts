import { adamwOp } from './adamw';
import { attentionOp } from './attention';
import { geluGradOp } from './gelu-grad';
import { layernormOp } from './layernorm';
import { layernormGradOp } from './layernorm-grad';
import { logSoftmaxOp } from './log-softmax';
import type { AnyFusedOp, KernelOf } from './op';
import { rmsnormOp } from './rmsnorm';
import { rmsnormGradOp } from './rmsnorm-grad';
import { ropeOp } from './rope';
import { softcapOp } from './softcap';
import { softmaxOp } from './softmax';
import { softmaxCrossEntropyOp } from './softmax-cross-entropy';
import { swigluOp } from './swiglu';

/** Checks that every entry is an op filed under its own name. */
function opTable<T extends { readonly [K in keyof T]: AnyFusedOp & { readonly name: K } }>(table: T): T {
  return table;
}

/**
 * Every fused op, by name. The dispatcher, the autograd decorator and the conformance kit
 * iterate over it; a backend's `fused` record is typed from it (`FusedKernels`).
 */
export const fusedOps = opTable({
  rmsnorm: rmsnormOp,
  layernorm: layernormOp,
  rope: ropeOp,
  attention: attentionOp,
  swiglu: swigluOp,
  softmax: softmaxOp,
  logSoftmax: logSoftmaxOp,
  softmaxCrossEntropy: softmaxCrossEntropyOp,
  geluGrad: geluGradOp,
  rmsnormGrad: rmsnormGradOp,
  layernormGrad: layernormGradOp,
  adamw: adamwOp,
  softcap: softcapOp,
});

/** Names of the fused ops. */
export type FusedOpName = keyof typeof fusedOps;

/**
 * The kernel of every fused op, typed from its module: tensor inputs as TensorInfo, then its
 * parameters; it returns new storage (nothing for in-place ops). A backend supplies
 * `Partial<FusedKernels>`; a missing kernel falls back to the op's composite.
 */
export type FusedKernels = { readonly [K in FusedOpName]: KernelOf<(typeof fusedOps)[K]> };
