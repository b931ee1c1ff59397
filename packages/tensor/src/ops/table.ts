import { adamwOp } from './adamw';
import { attentionOp } from './attention';
import { gegluOp } from './geglu';
import { geluGradOp } from './gelu-grad';
import { layernormOp } from './layernorm';
import { layernormGradOp } from './layernorm-grad';
import { logSoftmaxOp } from './log-softmax';
import type { AnyFusedOp, KernelOf } from './op';
import { quantizedMatmulOp } from './quantized-matmul';
import { rmsnormOp } from './rmsnorm';
import { rmsnormGradOp } from './rmsnorm-grad';
import { ropeOp } from './rope';
import { selectiveScanOp } from './selective-scan';
import { selectiveScanGradOp } from './selective-scan-grad';
import { softcapOp } from './softcap';
import { softmaxOp } from './softmax';
import { softmaxCrossEntropyOp } from './softmax-cross-entropy';
import { swigluOp } from './swiglu';

// Each op's front-end, exported from the package through this file (index.ts re-exports it
// whole), so a new op is named in tensor here and nowhere else: its import, its export, its entry.
export type { AdamWSpec } from './adamw';
export { adamw } from './adamw';
export type { AttentionOptions } from './attention';
export { attention } from './attention';
export { geglu } from './geglu';
export { geluGrad } from './gelu-grad';
export { layernorm } from './layernorm';
export { layernormGrad } from './layernorm-grad';
export { logSoftmax } from './log-softmax';
export { quantizedMatmul } from './quantized-matmul';
export { rmsnorm } from './rmsnorm';
export { rmsnormGrad } from './rmsnorm-grad';
export type { RopeOptions } from './rope';
export { rope, ropeInverseFrequencies } from './rope';
export { selectiveScan } from './selective-scan';
export { selectiveScanGrad } from './selective-scan-grad';
export { softcap } from './softcap';
export { softmax } from './softmax';
export { softmaxCrossEntropy } from './softmax-cross-entropy';
export { swiglu } from './swiglu';

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
  geglu: gegluOp,
  softmax: softmaxOp,
  logSoftmax: logSoftmaxOp,
  softmaxCrossEntropy: softmaxCrossEntropyOp,
  geluGrad: geluGradOp,
  rmsnormGrad: rmsnormGradOp,
  layernormGrad: layernormGradOp,
  adamw: adamwOp,
  softcap: softcapOp,
  quantizedMatmul: quantizedMatmulOp,
  selectiveScan: selectiveScanOp,
  selectiveScanGrad: selectiveScanGradOp,
});

/** Names of the fused ops. */
export type FusedOpName = keyof typeof fusedOps;

/**
 * The kernel of every fused op, typed from its module: tensor inputs as TensorInfo, then its
 * parameters; it returns new storage (nothing for in-place ops). A backend supplies
 * `Partial<FusedKernels>`; a missing kernel falls back to the op's composite.
 */
export type FusedKernels = { readonly [K in FusedOpName]: KernelOf<(typeof fusedOps)[K]> };
