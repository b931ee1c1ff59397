import { type KernelFeatures, mulAdd, v128Zero } from './expr';
import { ModuleBuilder } from './module-builder';

/** Validates the smallest module that stores one v128 computed with `features`. */
function validates(features: KernelFeatures): boolean {
  const mod = new ModuleBuilder({ initialPages: 1, maximumPages: 1, shared: false });
  mod.func('probe', [], (f) => f.storeV128(0, mulAdd(features, v128Zero, v128Zero, v128Zero)));
  return WebAssembly.validate(mod.encode());
}

/**
 * Whether this engine has WebAssembly SIMD (128-bit). Tells an engine without SIMD (fall back
 * to JavaScript) from a kernel module that fails validation (a bug, reported with the
 * validator's message).
 */
export function engineHasSimd(): boolean {
  return validates({ relaxedSimd: false });
}

/** The optional instruction sets this engine validates (relaxed SIMD: Node 22+, current browsers). */
export function engineFeatures(): KernelFeatures {
  return { relaxedSimd: validates({ relaxedSimd: true }) };
}
