import { BASELINE_FEATURES, type KernelFeatures, mulAdd, relaxedSimd, simdLoad, v128Zero } from './expr';
import type { FunctionBuilder } from './function-builder';
import { ModuleBuilder } from './module-builder';

/** Setting this environment variable to 0 builds the kernels without relaxed SIMD (Node), e.g. to compare the two. */
export const RELAXED_SIMD_VARIABLE = 'LOOM_WASM_RELAXED_SIMD';
/**
 * Setting this environment variable to 1 or 0 builds the wide tiles or the narrow ones whatever the engine (Node,
 * with relaxed SIMD), e.g. to compare the two or to test the other tile's code on this engine.
 */
export const WIDE_TILES_VARIABLE = 'LOOM_WASM_WIDE_TILES';

/**
 * Setting this environment variable to 1 or 0 builds the K-quant products on the byte dot product's i16 form or its i32
 * form whatever the engine lowers them to (Node, with relaxed SIMD's exact byte dot product), e.g. to compare the two or
 * to test the other form on this engine.
 */
export const WORD_DOTS_VARIABLE = 'LOOM_WASM_WORD_DOTS';

/** The relaxed SIMD byte dot product of the quantized kernels. */
const BYTE_DOT = 'i32x4.relaxed_dot_i8x16_i7x16_add_s';

/** A module with one function, `probe`, that `body` builds. */
function probeModule(body: (f: FunctionBuilder) => void): Uint8Array<ArrayBuffer> {
  const mod = new ModuleBuilder({ initialPages: 1, maximumPages: 1, shared: false });
  mod.func('probe', [], body);
  return mod.encode();
}

/** Whether the smallest module with the instructions of `relaxed` (or plain SIMD only) validates. */
function validates(relaxed: boolean): boolean {
  return WebAssembly.validate(
    probeModule((f) => {
      f.storeV128(0, mulAdd({ ...BASELINE_FEATURES, relaxedMadd: relaxed }, v128Zero, v128Zero, v128Zero));
      if (relaxed) f.storeV128(0, relaxedSimd(BYTE_DOT, v128Zero, v128Zero, v128Zero));
    }),
  );
}

/**
 * Whether the engine's byte dot product gives the exact sums the quantized kernels rely on (signed bytes of a times
 * bytes of b in 0..127, plus c), run on bytes of both signs: Node 20's V8 11.3, behind its flag, validates the
 * instruction but gives twice the dot products and drops c (the quantized products were off by up to 100%).
 */
function byteDotIsExact(): boolean {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
  const module = new WebAssembly.Module(
    probeModule((f) => {
      const [a, b, c] = [0, 16, 32].map((at) => simdLoad('v128.load', at));
      f.storeV128(48, relaxedSimd(BYTE_DOT, a, b, c));
    }),
  );
  const { probe } = new WebAssembly.Instance(module, { env: { memory } }).exports as { probe: () => void };
  const [a, b, c] = [
    new Int8Array(memory.buffer, 0, 16),
    new Int8Array(memory.buffer, 16, 16),
    new Int32Array(memory.buffer, 32, 4),
  ];
  for (let i = 0; i < 16; i++) {
    a[i] = ((i * 37) % 256) - 128;
    b[i] = (i * 29 + 5) % 128;
  }
  c.set([1000, -2000, 3000, -4000]);
  probe();
  const out = new Int32Array(memory.buffer, 48, 4);
  return out.every((sum, lane) => {
    let expected = c[lane];
    for (let j = 4 * lane; j < 4 * lane + 4; j++) expected += a[j] * b[j];
    return sum === expected;
  });
}

/**
 * Whether the engine lowers the byte dot product to x86's pmaddubsw, pmaddwd and paddd (no VNNI), which its
 * implementation-defined results outside the exact range tell apart: bytes 0xFF of b (255 to x86, -1 to Arm's sdot)
 * against -128 in a give -65536 a lane there, where pmaddubsw saturates each pair of products to -32768, but the
 * exact -130560 with VNNI's vpdpbusd and 512 on Arm. Only there is the i16 form (`wordDots`) the shorter one.
 */
function byteDotSaturatesPairs(): boolean {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
  const module = new WebAssembly.Module(
    probeModule((f) => {
      f.storeV128(32, relaxedSimd(BYTE_DOT, simdLoad('v128.load', 0), simdLoad('v128.load', 16), v128Zero));
    }),
  );
  const { probe } = new WebAssembly.Instance(module, { env: { memory } }).exports as { probe: () => void };
  new Int8Array(memory.buffer, 0, 16).fill(-128);
  new Uint8Array(memory.buffer, 16, 16).fill(255);
  probe();
  return new Int32Array(memory.buffer, 32, 4).every((sum) => sum === -65536);
}

/** Whether the K-quant products take the byte dot product's i16 form: LOOM_WASM_WORD_DOTS=1 or 0, else the probe. */
function takesWordDots(): boolean {
  const forced = environment(WORD_DOTS_VARIABLE);
  if (forced === '1' || forced === '0') return forced === '1';
  return byteDotSaturatesPairs();
}

/**
 * Whether this engine has WebAssembly SIMD (128-bit). Tells an engine without SIMD (fall back
 * to JavaScript) from a kernel module that fails validation (a bug, reported with the
 * validator's message).
 */
export function engineHasSimd(): boolean {
  return validates(false);
}

/** The value of environment variable `name` (Node; a browser has no environment). */
function environment(name: string): string | undefined {
  return typeof process === 'undefined' ? undefined : process.env?.[name];
}

/** Whether LOOM_WASM_RELAXED_SIMD=0 turns relaxed SIMD off. */
function relaxedSimdTurnedOff(): boolean {
  return environment(RELAXED_SIMD_VARIABLE) === '0';
}

/**
 * V8's version as major * 10 + minor (Node's `process.versions.v8`; in Chrome, its major version N is V8's N / 10),
 * or undefined for another engine.
 */
function v8Version(): number | undefined {
  const node = typeof process === 'undefined' ? undefined : process.versions?.v8;
  if (node !== undefined) {
    const [major, minor] = node.split('.').map(Number);
    return major * 10 + minor;
  }
  const chrome =
    typeof navigator === 'undefined' ? undefined : /Chrome\/(\d+)/.exec(navigator.userAgent)?.[1];
  return chrome === undefined ? undefined : Number(chrome);
}

/**
 * Whether this is a Node whose V8 has relaxed SIMD behind --experimental-wasm-relaxed-simd, off by default: before
 * 11.4 (Node 20's 11.3; Node 22 has 12.4). Later V8s reject the flag with a message on stderr. A browser's flags
 * (Chrome 110-113 has the same V8s) cannot be set from a page.
 */
function flaggedRelaxedSimd(): boolean {
  const version = v8Version();
  return typeof process !== 'undefined' && version !== undefined && version >= 110 && version < 114;
}

/**
 * Whether the engine's compiler keeps a loop's 12 accumulators and 3 other vectors in registers (`wideTiles`): V8 from
 * 13.6 (Node 24) and other engines. V8 up to 12.9 places every load of the loop before the multiply-adds and spills:
 * the few-row kernel's 2 x 6 blocks, one thread, [8,288] x [32000,288]ᵀ, 43-49 GFLOP/s in 2 x 4 blocks against 30-34
 * on Node 20, 22 and 23; 42 -> 49.5 on Node 24 and 26. (The packed product's wide tile loads A's values as integers
 * there instead: see gemm-kernel.ts.) LOOM_WASM_WIDE_TILES=1 or 0 decides instead.
 */
function keepsWideTiles(): boolean {
  const forced = environment(WIDE_TILES_VARIABLE);
  if (forced === '1' || forced === '0') return forced === '1';
  const version = v8Version();
  return version === undefined || version >= 136;
}

/**
 * Turns on relaxed SIMD where the engine has it behind a flag (Node 20). Its fused multiply-add is the products' port
 * limit (110M prefill of 128 on 2 threads, Node 20: 294-314 -> 271-285 ms). A wasm feature flag is read when a module
 * is compiled, so setting it before the kernels are built is enough; an engine that refuses it keeps the plain kernels.
 */
function enableFlaggedRelaxedSimd(): void {
  if (!flaggedRelaxedSimd() || typeof process.getBuiltinModule !== 'function') return;
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString('--experimental-wasm-relaxed-simd');
  } catch {
    // An engine with frozen flags: the plain kernels.
  }
}

/**
 * The optional instructions the kernels use: relaxed SIMD where the engine validates it (Node 22+, current
 * browsers; Node 20 once its flag is on) unless LOOM_WASM_RELAXED_SIMD=0, its byte dot product only where it gives
 * exact sums (and its i16 form where the i32 one is three x86 instructions); with it, wide tiles where the compiler keeps them in registers (with separate multiplies and adds,
 * whose products take a register more, the few-row kernel is as fast either way: 36-37 GFLOP/s on Node 26).
 */
export function engineFeatures(): KernelFeatures {
  if (relaxedSimdTurnedOff()) return BASELINE_FEATURES;
  if (!validates(true)) enableFlaggedRelaxedSimd();
  if (!validates(true)) return BASELINE_FEATURES;
  const relaxedDot = byteDotIsExact();
  return {
    relaxedMadd: true,
    relaxedDot,
    wordDots: relaxedDot && takesWordDots(),
    wideTiles: keepsWideTiles(),
  };
}
