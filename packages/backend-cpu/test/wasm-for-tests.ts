import { type WasmRuntime, wasmRuntime, wasmUnavailableReason } from '../src/wasm/runtime';
import { cpuKernelSettings } from '../src/wasm/settings';

/**
 * The WebAssembly runtime for a suite of WebAssembly kernel tests. On CI (CI=true) a missing
 * runtime is an error, so those suites never skip silently there; elsewhere the suite skips
 * after saying why.
 */
export function wasmForTests(): WasmRuntime | undefined {
  const runtime = wasmRuntime();
  if (runtime) return runtime;
  const reason = wasmUnavailableReason() ?? 'unknown reason';
  if (process.env.CI === 'true') throw new Error(`WebAssembly kernel tests must run on CI: ${reason}`);
  console.warn(`skipping WebAssembly kernel tests: ${reason}`);
  return undefined;
}

/** Kernel settings of the tests: the defaults (WebAssembly on, the host's threads). */
export const SETTINGS = cpuKernelSettings();

/** Kernel settings that force the JavaScript kernels. */
export const JS_SETTINGS = cpuKernelSettings({ wasm: false });
