import { ACTIVATIONS } from './activation-kernel';
import { ADAMW } from './adamw-kernel';
import { ARGMAX } from './argmax-kernel';
import { ATTEND_GRAD, ATTEND_ROWS } from './attention-rows-kernel';
import { COLUMN_SUM } from './column-sum-kernel';
import { COPY_ROWS } from './copy-kernel';
import { ATTEND_ONE } from './decode-attention-kernel';
import { DEQUANT_GEMM } from './dequant-gemm-kernel';
import { ELEMENTWISE } from './elementwise-kernel';
import { GEMM_FEW_T } from './gemm-few-kernel';
import { GEMM } from './gemm-kernel';
import { GEMV_N, GEMV_T } from './gemv-kernel';
import { BF16_DOT, F16_DOT } from './half-dot-kernel';
import type { ArgsOf, KernelSpec, ParamKind } from './kernel-spec';
import { NORMS } from './norm-kernel';
import { NORM_PARAM_GRAD } from './norm-param-grad-kernel';
import { Q4K_DOT } from './q4k-dot-kernel';
import { Q4K_ROWS_DOT } from './q4k-rows-kernel';
import { Q6K_DOT } from './q6k-dot-kernel';
import { Q4_0_DOT, Q8_0_DOT } from './quant-dot-kernel';
import { QUANTIZE_SUPER_X, QUANTIZE_X } from './quantize-x-kernel';
import { ROPE } from './rope-kernel';
import { ROW_SUM } from './row-sum-kernel';
import { ROW_EXP_SUM, SOFTMAX, SOFTMAX_GRAD } from './softmax-kernel';

/**
 * Every kernel the module exports, each declared once in its own file. Adding a kernel is
 * adding its entry here: its name joins `KernelName`, the module exports it, and the runtime
 * gives it a typed call signature.
 */
export const KERNELS = [
  GEMM,
  GEMM_FEW_T,
  GEMV_T,
  GEMV_N,
  ...ELEMENTWISE,
  ...ACTIVATIONS,
  SOFTMAX,
  SOFTMAX_GRAD,
  ROW_EXP_SUM,
  COLUMN_SUM,
  ROW_SUM,
  ARGMAX,
  ...NORMS,
  NORM_PARAM_GRAD,
  ADAMW,
  COPY_ROWS,
  ROPE,
  ATTEND_ONE,
  ATTEND_ROWS,
  ATTEND_GRAD,
  ...QUANTIZE_X,
  ...QUANTIZE_SUPER_X,
  Q8_0_DOT,
  Q4_0_DOT,
  Q4K_DOT,
  Q4K_ROWS_DOT,
  Q6K_DOT,
  ...DEQUANT_GEMM,
  BF16_DOT,
  F16_DOT,
] as const;

type RegisteredKernel = (typeof KERNELS)[number];

/** Each registered kernel by its name. */
type Registry = { readonly [S in RegisteredKernel as S['name']]: S };

/** The name of a kernel the module exports. */
export type KernelName = keyof Registry;

/** The arguments of kernel `K`, one number per parameter (f32 parameters as their values), without the work area. */
export type KernelArgs<K extends KernelName> = ArgsOf<Registry[K]['params']>;

/** How kernel `K` is called: its arguments, then the byte address of the calling thread's work area. */
export type KernelCall<K extends KernelName> = (...args: [...KernelArgs<K>, work: number]) => void;

/** The module's exports, typed. */
export type KernelFunctions = { readonly [K in KernelName]: KernelCall<K> };

/** The kernel names in registry order: the index of a kernel in the thread pool's job block. */
export const KERNEL_NAMES: readonly KernelName[] = KERNELS.map((k) => k.name);

const byName = new Map<string, KernelSpec>(KERNELS.map((k) => [k.name, k]));

/** The kinds of the parameters of `kernel`, in order. */
export function paramKinds(kernel: KernelName): readonly ParamKind[] {
  const spec = byName.get(kernel);
  if (!spec) throw new Error(`kernel registry: no kernel named ${kernel}`);
  return spec.params.map((p) => p.kind);
}

/**
 * `args` as the arguments of `kernel` after checking their count against its parameters, for
 * argument lists assembled at run time (operand addresses, then sizes); throws on a mismatch.
 */
export function checkedArgs<K extends KernelName>(kernel: K, args: readonly number[]): KernelArgs<K> {
  const count = paramKinds(kernel).length;
  if (args.length !== count) {
    throw new Error(
      `kernel ${kernel}: expected ${count} arguments, got ${args.length}; this is a bug in its caller`,
    );
  }
  // The count matches the parameter tuple, whose elements are all numbers.
  return [...args] as KernelArgs<K>;
}
