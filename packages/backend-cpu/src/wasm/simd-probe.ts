import {
  BASELINE_FEATURES,
  type ByteDot,
  type KernelFeatures,
  mulAdd,
  relaxedSimd,
  simdLoad,
  v128Zero,
} from './expr';
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
 * Setting this environment variable to i32 or i16 builds the quantized products on that form of the byte dot product
 * (Node, where the engine's is exact) whatever the engine lowers them to, e.g. to compare the two or to test the other
 * form on this engine.
 */
export const BYTE_DOT_VARIABLE = 'LOOM_WASM_BYTE_DOT';

/** The relaxed SIMD byte dot product of the quantized kernels, in its i32 form and its i16 one. */
const BYTE_DOT = 'i32x4.relaxed_dot_i8x16_i7x16_add_s';
const WORD_DOT = 'i16x8.relaxed_dot_i8x16_i7x16_s';

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

/** Runs `probe` of a module whose body `body` builds, on one page of memory that `fill` writes first; gives the page. */
function runProbe(body: (f: FunctionBuilder) => void, fill: (page: ArrayBuffer) => void): ArrayBuffer {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
  const module = new WebAssembly.Module(probeModule(body));
  const { probe } = new WebAssembly.Instance(module, { env: { memory } }).exports as { probe: () => void };
  fill(memory.buffer);
  probe();
  return memory.buffer;
}

/** Signed bytes at 0 and bytes 0..127 at 16, of both signs and sizes: the operands of the exactness probes. */
function fillExactOperands(page: ArrayBuffer): void {
  const [a, b] = [new Int8Array(page, 0, 16), new Int8Array(page, 16, 16)];
  for (let i = 0; i < 16; i++) {
    a[i] = ((i * 37) % 256) - 128;
    b[i] = (i * 29 + 5) % 128;
  }
}

/** The sum of a[j] · b[j] over j in [from, to) of the operands fillExactOperands wrote. */
function exactSum(page: ArrayBuffer, from: number, to: number): number {
  const [a, b] = [new Int8Array(page, 0, 16), new Int8Array(page, 16, 16)];
  let sum = 0;
  for (let j = from; j < to; j++) sum += a[j] * b[j];
  return sum;
}

/**
 * Whether the engine's byte dot product in its i32 form gives the exact sums the quantized kernels rely on (signed
 * bytes of a times bytes of b in 0..127, plus c), run on bytes of both signs: Node 20's V8 11.3, behind its flag,
 * validates the instruction but gives twice the dot products and drops c (the quantized products were off by up to
 * 100%).
 */
function byteDotIsExact(): boolean {
  const c = [1000, -2000, 3000, -4000];
  const page = runProbe(
    (f) => {
      const [a, b, c] = [0, 16, 32].map((at) => simdLoad('v128.load', at));
      f.storeV128(48, relaxedSimd(BYTE_DOT, a, b, c));
    },
    (page) => {
      fillExactOperands(page);
      new Int32Array(page, 32, 4).set(c);
    },
  );
  return new Int32Array(page, 48, 4).every(
    (sum, lane) => sum === c[lane] + exactSum(page, 4 * lane, 4 * lane + 4),
  );
}

/** Whether the i16 form gives exact sums of pairs on the same operands (Node 20's does). */
function wordDotIsExact(): boolean {
  const page = runProbe((f) => {
    f.storeV128(32, relaxedSimd(WORD_DOT, simdLoad('v128.load', 0), simdLoad('v128.load', 16)));
  }, fillExactOperands);
  return new Int16Array(page, 32, 8).every((sum, lane) => sum === exactSum(page, 2 * lane, 2 * lane + 2));
}

/**
 * Whether the engine lowers the i32 form to x86's pmaddubsw, pmaddwd and paddd (no VNNI), which its
 * implementation-defined results outside the exact range tell apart: bytes 0xFF of b (255 to x86, -1 to Arm's sdot)
 * against -128 in a give -65536 a lane there, where pmaddubsw saturates each pair of products to -32768, but the
 * exact -130560 with VNNI's vpdpbusd and 512 on Arm. Only there is the i16 form (pmaddubsw alone) the shorter one.
 */
function byteDotSaturatesPairs(): boolean {
  const page = runProbe(
    (f) => {
      f.storeV128(32, relaxedSimd(BYTE_DOT, simdLoad('v128.load', 0), simdLoad('v128.load', 16), v128Zero));
    },
    (page) => {
      new Int8Array(page, 0, 16).fill(-128);
      new Uint8Array(page, 16, 16).fill(255);
    },
  );
  return new Int32Array(page, 32, 4).every((sum) => sum === -65536);
}

/**
 * The form of the byte dot product the quantized products take (see ByteDot): LOOM_WASM_BYTE_DOT=i32 or i16 where that
 * form is exact, else the i32 form where it is exact and one instruction, else the i16 form where exact.
 */
function byteDotForm(): ByteDot {
  const i32 = byteDotIsExact();
  const i16 = wordDotIsExact();
  const forced = environment(BYTE_DOT_VARIABLE);
  if (forced === 'i32' || forced === 'i16') return (forced === 'i32' ? i32 : i16) ? forced : 'none';
  if (i32 && !(i16 && byteDotSaturatesPairs())) return 'i32';
  return i16 ? 'i16' : 'none';
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
 * browsers; Node 20 once its flag is on) unless LOOM_WASM_RELAXED_SIMD=0, its byte dot product in the form that gives
 * exact sums in the fewest instructions; with it, wide tiles where the compiler keeps them in registers (with separate multiplies and adds,
 * whose products take a register more, the few-row kernel is as fast either way: 36-37 GFLOP/s on Node 26).
 */
export function engineFeatures(): KernelFeatures {
  if (relaxedSimdTurnedOff()) return BASELINE_FEATURES;
  if (!validates(true)) enableFlaggedRelaxedSimd();
  if (!validates(true)) return BASELINE_FEATURES;
  return { relaxedMadd: true, byteDot: byteDotForm(), wideTiles: keepsWideTiles() };
}
