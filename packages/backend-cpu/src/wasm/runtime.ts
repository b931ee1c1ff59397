import { ACTIVATION_KERNELS } from './activation-kernel';
import { ADAMW_KERNEL } from './adamw-kernel';
import type { Block } from './allocator';
import { COLUMN_SUM_KERNEL } from './column-sum-kernel';
import { COPY_ROWS_KERNEL } from './copy-kernel';
import { ELEMENTWISE_KERNELS } from './elementwise-kernel';
import type { KernelFeatures } from './expr';
import { gemmLayout } from './gemm-kernel';
import { WasmHeap } from './heap';
import { buildKernelModule, GEMM_CONFIG } from './kernel-module';
import { NORM_KERNELS, type NormKernelName } from './norm-kernel';
import { ROPE_KERNEL } from './rope-kernel';
import { engineFeatures, engineHasSimd } from './simd-probe';
import { SOFTMAX_KERNEL } from './softmax-kernel';

type ElementwiseKernelName = (typeof ELEMENTWISE_KERNELS)[keyof typeof ELEMENTWISE_KERNELS];
type ActivationKernelName = (typeof ACTIVATION_KERNELS)[keyof typeof ACTIVATION_KERNELS];

/**
 * The kernels the module exports (see GEMM_PARAMS, GEMM_FEW_T_PARAMS, GEMV_T_PARAMS, GEMV_N_PARAMS,
 * ELEMENTWISE_PARAMS, the activations' UNARY_PARAMS and BINARY_PARAMS, SOFTMAX_PARAMS, COLUMN_SUM_PARAMS, the
 * NORM_KERNELS params, ADAMW_PARAMS, COPY_ROWS_PARAMS,
 * ROPE_PARAMS).
 */
export type KernelName =
  | 'gemm'
  | 'gemm_few_t'
  | 'gemv_t'
  | 'gemv_n'
  | ElementwiseKernelName
  | ActivationKernelName
  | typeof SOFTMAX_KERNEL
  | typeof COLUMN_SUM_KERNEL
  | NormKernelName
  | typeof ADAMW_KERNEL
  | typeof COPY_ROWS_KERNEL
  | typeof ROPE_KERNEL;
export const KERNEL_NAMES: readonly KernelName[] = [
  'gemm',
  'gemm_few_t',
  'gemv_t',
  'gemv_n',
  ...Object.values(ELEMENTWISE_KERNELS),
  ...Object.values(ACTIVATION_KERNELS),
  SOFTMAX_KERNEL,
  COLUMN_SUM_KERNEL,
  ...Object.values(NORM_KERNELS),
  ADAMW_KERNEL,
  COPY_ROWS_KERNEL,
  ROPE_KERNEL,
];

/**
 * A kernel export. Callers of `gemm` append the running thread's gemm work area as the last
 * argument; the matrix-vector kernels take one parameter fewer and ignore it.
 */
export type Kernel = (...args: number[]) => void;

/** The compiled kernel module, its instance on this thread, and the heap it works in. */
export interface WasmRuntime {
  readonly heap: WasmHeap;
  readonly module: WebAssembly.Module;
  /** The optional instruction sets the module was built with. */
  readonly features: KernelFeatures;
  readonly kernels: Readonly<Record<KernelName, Kernel>>;
  /** The main thread's gemm work area. */
  readonly work: Block;
}

let state: { runtime: WasmRuntime } | { unsupported: string } | undefined;

/**
 * The WebAssembly runtime, created on first use; undefined where WebAssembly SIMD is missing
 * (then storage lives in ordinary typed arrays and kernels run in JavaScript).
 */
export function wasmRuntime(): WasmRuntime | undefined {
  state ??= startRuntime();
  return 'runtime' in state ? state.runtime : undefined;
}

/** Why the WebAssembly runtime is unavailable, or undefined when it is available. */
export function wasmUnavailableReason(): string | undefined {
  state ??= startRuntime();
  return 'unsupported' in state ? state.unsupported : undefined;
}

/** Creates the runtime once; when the engine cannot run it, says so once and why. */
function startRuntime(): { runtime: WasmRuntime } | { unsupported: string } {
  const started = createRuntime();
  if ('unsupported' in started) {
    console.warn(`@loom/backend-cpu: running JavaScript kernels, ${started.unsupported}`);
  }
  return started;
}

/** Compiles the kernel module; a module the engine rejects is a bug, reported with the validator's message. */
export function compileKernels(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module {
  try {
    return new WebAssembly.Module(bytes);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `@loom/backend-cpu: the generated WebAssembly kernel module failed validation: ${message}`,
    );
  }
}

function createRuntime(): { runtime: WasmRuntime } | { unsupported: string } {
  if (typeof WebAssembly !== 'object') return { unsupported: 'WebAssembly is not available' };
  let heap: WasmHeap;
  try {
    heap = WasmHeap.create();
  } catch (error) {
    return { unsupported: String(error) };
  }
  if (!engineHasSimd()) return { unsupported: 'this engine has no WebAssembly SIMD (128-bit)' };
  const features = engineFeatures();
  const module = compileKernels(buildKernelModule(heap.limits, features));
  const instance = new WebAssembly.Instance(module, { env: { memory: heap.memory } });
  const kernels = {
    gemm: exportedKernel(instance, 'gemm'),
    gemm_few_t: exportedKernel(instance, 'gemm_few_t'),
    gemv_t: exportedKernel(instance, 'gemv_t'),
    gemv_n: exportedKernel(instance, 'gemv_n'),
    binary_add_f32: exportedKernel(instance, 'binary_add_f32'),
    binary_sub_f32: exportedKernel(instance, 'binary_sub_f32'),
    binary_mul_f32: exportedKernel(instance, 'binary_mul_f32'),
    binary_div_f32: exportedKernel(instance, 'binary_div_f32'),
    gelu_f32: exportedKernel(instance, 'gelu_f32'),
    gelu_grad_f32: exportedKernel(instance, 'gelu_grad_f32'),
    exp_f32: exportedKernel(instance, 'exp_f32'),
    sigmoid_f32: exportedKernel(instance, 'sigmoid_f32'),
    silu_f32: exportedKernel(instance, 'silu_f32'),
    swiglu_f32: exportedKernel(instance, 'swiglu_f32'),
    softmax_f32: exportedKernel(instance, 'softmax_f32'),
    column_sum_f32: exportedKernel(instance, 'column_sum_f32'),
    layernorm_f32: exportedKernel(instance, 'layernorm_f32'),
    layernorm_grad_f32: exportedKernel(instance, 'layernorm_grad_f32'),
    rmsnorm_f32: exportedKernel(instance, 'rmsnorm_f32'),
    rmsnorm_grad_f32: exportedKernel(instance, 'rmsnorm_grad_f32'),
    adamw_f32: exportedKernel(instance, 'adamw_f32'),
    copy_rows_32: exportedKernel(instance, 'copy_rows_32'),
    rope_f32: exportedKernel(instance, 'rope_f32'),
  };
  const work = heap.alloc(gemmLayout(GEMM_CONFIG).bytes);
  if (!work) return { unsupported: 'cannot allocate the matmul work area in WebAssembly memory' };
  return { runtime: { heap, module, features, kernels, work } };
}

function exportedKernel(instance: WebAssembly.Instance, name: KernelName): Kernel {
  const fn = instance.exports[name];
  if (typeof fn !== 'function') throw new Error(`kernel module: export ${name} is not a function`);
  return (...args: number[]) => {
    fn(...args);
  };
}
