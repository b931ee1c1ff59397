import { type KernelFeatures, mulAdd, relaxedSimd, v128Zero } from './expr';
import { ModuleBuilder } from './module-builder';

/** Setting this environment variable to 0 builds the kernels without relaxed SIMD (Node), e.g. to compare the two. */
export const RELAXED_SIMD_VARIABLE = 'LOOM_WASM_RELAXED_SIMD';

/** Validates the smallest module that stores the v128 values computed with `features`. */
function validates(features: KernelFeatures): boolean {
  const mod = new ModuleBuilder({ initialPages: 1, maximumPages: 1, shared: false });
  mod.func('probe', [], (f) => {
    f.storeV128(0, mulAdd(features, v128Zero, v128Zero, v128Zero));
    if (features.relaxedSimd) {
      f.storeV128(0, relaxedSimd('i32x4.relaxed_dot_i8x16_i7x16_add_s', v128Zero, v128Zero, v128Zero));
    }
  });
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

/** Whether LOOM_WASM_RELAXED_SIMD=0 turns relaxed SIMD off (Node; a browser has no environment). */
function relaxedSimdTurnedOff(): boolean {
  return typeof process !== 'undefined' && process.env?.[RELAXED_SIMD_VARIABLE] === '0';
}

/**
 * The optional instruction sets the kernels use: relaxed SIMD where the engine validates it (Node 22+, current
 * browsers) unless LOOM_WASM_RELAXED_SIMD=0.
 */
export function engineFeatures(): KernelFeatures {
  return { relaxedSimd: !relaxedSimdTurnedOff() && validates({ relaxedSimd: true }) };
}
