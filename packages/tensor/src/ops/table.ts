import { adamwOp } from './adamw';
import { attentionOp } from './attention';
import { attentionGradOp } from './attention-grad';
import { attentionStepOp } from './attention-step';
import { gegluOp } from './geglu';
import { geluGradOp } from './gelu-grad';
import { halfMatmulOp } from './half-matmul';
import { layernormOp } from './layernorm';
import { layernormGradOp } from './layernorm-grad';
import { layernormParamGradOp } from './layernorm-param-grad';
import { linearOp } from './linear';
import { logSoftmaxOp } from './log-softmax';
import type { AnyFusedOp, KernelOf } from './op';
import { quantizedMatmulOp } from './quantized-matmul';
import { rmsnormOp } from './rmsnorm';
import { rmsnormGradOp } from './rmsnorm-grad';
import { rmsnormWeightGradOp } from './rmsnorm-weight-grad';
import { ropeOp } from './rope';
import { selectiveScanOp } from './selective-scan';
import { selectiveScanGradOp } from './selective-scan-grad';
import { softcapOp } from './softcap';
import { softmaxOp } from './softmax';
import { softmaxCrossEntropyOp } from './softmax-cross-entropy';
import { softmaxCrossEntropyGradOp } from './softmax-cross-entropy-grad';
import { softmaxGradOp } from './softmax-grad';
import { squaredReluOp } from './squared-relu';
import { sumSquaresIntoOp } from './sum-squares-into';
import { swigluOp } from './swiglu';
import { swigluBlockOp } from './swiglu-block';
import { swigluGradOp } from './swiglu-grad';
import { weightRowsOp } from './weight-rows';
import { writeRowsOp } from './write-rows';

// Each op's front-end, exported from the package through this file (index.ts re-exports it
// whole), so a new op is named in tensor here and nowhere else: its import, its export, its entry.
export type { AdamWSpec } from './adamw';
export { adamw } from './adamw';
export { attention } from './attention';
export type { AttentionGrads } from './attention-grad';
export { attentionGrad } from './attention-grad';
export type { AttentionOptions } from './attention-options';
export type {
  AttentionStepFormats,
  AttentionStepOptions,
  AttentionStepParams,
  AttentionStepWeights,
} from './attention-step';
export { attentionStep } from './attention-step';
export { geglu } from './geglu';
export { geluGrad } from './gelu-grad';
export { halfMatmul } from './half-matmul';
export { layernorm } from './layernorm';
export { layernormGrad } from './layernorm-grad';
export { layernormParamGrad } from './layernorm-param-grad';
export { linear } from './linear';
export { logSoftmax } from './log-softmax';
export { quantizedMatmul } from './quantized-matmul';
export { rmsnorm } from './rmsnorm';
export { rmsnormGrad } from './rmsnorm-grad';
export { rmsnormWeightGrad } from './rmsnorm-weight-grad';
export type { RopeOptions } from './rope';
export { rope, ropeInverseFrequencies } from './rope';
export { selectiveScan } from './selective-scan';
export { selectiveScanGrad } from './selective-scan-grad';
export { softcap } from './softcap';
export { softmax } from './softmax';
export { softmaxCrossEntropy } from './softmax-cross-entropy';
export { softmaxGrad } from './softmax-grad';
export { squaredRelu } from './squared-relu';
export { sumSquaresInto } from './sum-squares-into';
export { swiglu } from './swiglu';
export type { SwigluFormats, SwigluWeights } from './swiglu-block';
export { swigluBlock } from './swiglu-block';
export { swigluGrad } from './swiglu-grad';
export type { ProductWeight, WeightFormat, WeightInputs } from './weight-product';
export { isQuantFormat, weightInputs, weightMatmul } from './weight-product';
export type { CompactFormat } from './weight-rows';
export { weightRows } from './weight-rows';
export { writeRows } from './write-rows';

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
  attentionGrad: attentionGradOp,
  attentionStep: attentionStepOp,
  swiglu: swigluOp,
  swigluBlock: swigluBlockOp,
  linear: linearOp,
  geglu: gegluOp,
  softmax: softmaxOp,
  logSoftmax: logSoftmaxOp,
  softmaxCrossEntropy: softmaxCrossEntropyOp,
  softmaxCrossEntropyGrad: softmaxCrossEntropyGradOp,
  softmaxGrad: softmaxGradOp,
  geluGrad: geluGradOp,
  swigluGrad: swigluGradOp,
  rmsnormGrad: rmsnormGradOp,
  layernormGrad: layernormGradOp,
  rmsnormWeightGrad: rmsnormWeightGradOp,
  layernormParamGrad: layernormParamGradOp,
  adamw: adamwOp,
  softcap: softcapOp,
  squaredRelu: squaredReluOp,
  quantizedMatmul: quantizedMatmulOp,
  halfMatmul: halfMatmulOp,
  selectiveScan: selectiveScanOp,
  selectiveScanGrad: selectiveScanGradOp,
  writeRows: writeRowsOp,
  weightRows: weightRowsOp,
  sumSquaresInto: sumSquaresIntoOp,
});

/** Names of the fused ops. */
export type FusedOpName = keyof typeof fusedOps;

/** The kernel of every op of the table, typed from its module. */
type TableKernels = { readonly [K in FusedOpName]: KernelOf<(typeof fusedOps)[K]> };

// `Backend.fused` is typed by `FusedKernels`, declared empty in backend.ts (below the ops, which use backends)
// and given one member per op of this table here. The package's own name, not '../backend', names the
// module merged into, so that the merge survives bundling the declarations into one index.d.ts.
declare module '@loom/tensor' {
  interface FusedKernels extends TableKernels {}
}
