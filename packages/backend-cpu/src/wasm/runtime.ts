import type { Block } from './allocator';
import type { KernelFeatures } from './expr';
import { GEMM_WORK_BYTES } from './gemm-kernel';
import { WasmHeap } from './heap';
import { buildKernelModule } from './kernel-module';
import { KERNEL_NAMES, type KernelFunctions, type KernelName, paramKinds } from './kernels';
import { engineFeatures, engineHasSimd } from './simd-probe';
import { moduleText } from './wat';
import { writeKernelDump } from './wat-dump';

export type { KernelArgs, KernelCall, KernelName } from './kernels';
export { KERNEL_NAMES } from './kernels';

/** The compiled kernel module, its instance on this thread, and the heap it works in. */
export interface WasmRuntime {
  readonly heap: WasmHeap;
  readonly module: WebAssembly.Module;
  /** The optional instruction sets the module was built with. */
  readonly features: KernelFeatures;
  readonly kernels: KernelFunctions;
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
  const bytes = buildKernelModule(heap.limits, features);
  writeKernelDump(bytes);
  const module = compileKernels(bytes);
  const instance = new WebAssembly.Instance(module, { env: { memory: heap.memory } });
  const kernels = exportedKernels(instance);
  const work = heap.alloc(GEMM_WORK_BYTES);
  if (!work) return { unsupported: 'cannot allocate the matmul work area in WebAssembly memory' };
  return { runtime: { heap, module, features, kernels, work } };
}

/**
 * The kernels of `instance`, each checked to be a function of its registered arity (its
 * parameters and the work area). A kernel with f32 parameters passes them as their bits.
 */
function exportedKernels(instance: WebAssembly.Instance): KernelFunctions {
  const entries = KERNEL_NAMES.map((name) => [name, exportedKernel(instance, name)] as const);
  // One entry per kernel name, each a function of that kernel's arity.
  return Object.fromEntries(entries) as unknown as KernelFunctions;
}

function exportedKernel(instance: WebAssembly.Instance, name: KernelName): (...args: number[]) => void {
  const fn = instance.exports[name];
  const kinds = paramKinds(name);
  if (typeof fn !== 'function') throw new Error(`kernel module: export ${name} is not a function`);
  if (fn.length !== kinds.length + 1) {
    throw new Error(
      `kernel module: export ${name} takes ${fn.length} arguments, its registry entry ${kinds.length + 1}`,
    );
  }
  if (!kinds.includes('f32')) return fn as (...args: number[]) => void;
  return (...args) => fn(...args.map((value, i) => (kinds[i] === 'f32' ? f32Bits(value) : value)));
}

const bitsScratch = new Float32Array(1);
const bitsView = new Int32Array(bitsScratch.buffer);

/** The bits of `value` rounded to f32, as an i32: how an f32 parameter crosses into WebAssembly. */
export function f32Bits(value: number): number {
  bitsScratch[0] = value;
  return bitsView[0];
}

/**
 * The text format (WAT) of the kernel module this runtime runs, for reading (in a browser,
 * where LOOM_WASM_DUMP cannot be set); undefined where WebAssembly SIMD is unavailable.
 */
export function kernelModuleText(): string | undefined {
  const runtime = wasmRuntime();
  return runtime && moduleText(buildKernelModule(runtime.heap.limits, runtime.features));
}
