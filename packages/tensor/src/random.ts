/**
 * The counter-based random generator every backend implements identically, so the same seed
 * gives the same numbers on every device: element i of a draw with seed s uses
 * bits(s, i) = mix(i ^ mix(s)), where mix is a 32-bit integer finaliser (xor-shift and
 * multiply rounds). Uniform values are ((bits >>> 8) + 0.5) / 2^24, in (0, 1). Normal values
 * use Box-Muller on the uniforms of counters 2i and 2i + 1: sqrt(-2 ln u1) * cos(2 pi u2).
 */
export const RANDOM_MIX_1 = 0x7feb352d;
export const RANDOM_MIX_2 = 0x846ca68b;

/** The 32-bit finaliser: an unsigned integer in, an unsigned integer out. */
export function mix32(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, RANDOM_MIX_1) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, RANDOM_MIX_2) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** Uniform value in (0, 1) for counter `i` of a draw seeded with `seed`. */
export function uniformAt(seed: number, i: number): number {
  const bits = mix32((i ^ mix32(seed >>> 0)) >>> 0);
  return ((bits >>> 8) + 0.5) / 16777216;
}

/** Standard normal value for element `i` of a draw seeded with `seed`. */
export function normalAt(seed: number, i: number): number {
  const u1 = uniformAt(seed, 2 * i);
  const u2 = uniformAt(seed, 2 * i + 1);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}
