import { emitActivations } from './activation-kernel';
import { emitAdamw } from './adamw-kernel';
import { emitColumnSum } from './column-sum-kernel';
import { emitCopyRows } from './copy-kernel';
import { emitElementwise } from './elementwise-kernel';
import { BASELINE_FEATURES, type KernelFeatures } from './expr';
import { emitGemmFewT } from './gemm-few-kernel';
import { emitGemm, type GemmConfig } from './gemm-kernel';
import { emitGemvN, emitGemvT } from './gemv-kernel';
import { type ImportedMemory, ModuleBuilder } from './module-builder';
import { emitNorms } from './norm-kernel';
import { emitRope } from './rope-kernel';
import { emitSoftmax } from './softmax-kernel';

/** Register tile and cache blocking of the matrix product kernel. */
export const GEMM_CONFIG: GemmConfig = { mr: 4, nv: 2, kc: 256, mc: 128, nc: 2048 };

/** Rows of W folded into the output per pass of `gemv_n`. */
const GEMV_N_ROWS = 4;
/** Vector accumulators of the dot products of `gemv_t`. */
const GEMV_T_LANES = 4;
/** Rows of A per register tile of `gemm_few_t`, each with 4 vector accumulators (3 or 4 rows spill on x64's 16 registers). */
const GEMM_FEW_T_ROWS = 2;

/** The kernel module (`gemm`, `gemm_few_t`, `gemv_t`, `gemv_n`, the f32 elementwise, activation, softmax, column-sum, norm, AdamW, copy and RoPE kernels) over an imported memory with these limits. */
export function buildKernelModule(
  memory: ImportedMemory,
  features: KernelFeatures = BASELINE_FEATURES,
): Uint8Array<ArrayBuffer> {
  const mod = new ModuleBuilder(memory);
  emitGemm(mod, GEMM_CONFIG, features);
  emitGemmFewT(mod, GEMM_FEW_T_ROWS, features);
  emitGemvT(mod, GEMV_T_LANES, features);
  emitGemvN(mod, GEMV_N_ROWS, features);
  emitElementwise(mod);
  emitActivations(mod);
  emitSoftmax(mod);
  emitColumnSum(mod);
  emitNorms(mod);
  emitAdamw(mod);
  emitCopyRows(mod);
  emitRope(mod);
  return mod.encode();
}
