import { v128Zero } from './expr';
import { ModuleBuilder } from './module-builder';

/**
 * Whether this engine has WebAssembly SIMD (128-bit): validates the smallest module that
 * stores one v128. Tells an engine without SIMD (fall back to JavaScript) from a kernel
 * module that fails validation (a bug, reported with the validator's message).
 */
export function engineHasSimd(): boolean {
  const mod = new ModuleBuilder({ initialPages: 1, maximumPages: 1, shared: false });
  mod.func('probe', [], (f) => f.storeV128(0, v128Zero));
  return WebAssembly.validate(mod.encode());
}
