import { checkInteger } from './validate';

const MASK_64 = (1n << 64n) - 1n;
const SPLITMIX_GAMMA = 0x9e3779b97f4a7c15n;
const TWO_POW_26 = 67108864;
const TWO_POW_53 = 9007199254740992;

/** The largest seed: every safe non-negative integer is a valid seed. */
export const MAX_SEED = Number.MAX_SAFE_INTEGER;

/** One SplitMix64 output for the state `state + gamma` (Steele, Lea and Flood 2014). */
function splitMix64(state: bigint): bigint {
  let z = state & MASK_64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return z ^ (z >> 31n);
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A seeded pseudo-random generator: xoshiro128** (Blackman and Vigna 2018), 128 bits of state,
 * seeded by two SplitMix64 outputs of the seed as the authors recommend. Plain 32-bit integer
 * arithmetic, so the same seed gives the same numbers in every JavaScript engine.
 */
export class Rng {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;

  /** `seed`: an integer in [0, 2^53 - 1]. */
  constructor(seed: number) {
    checkInteger('seed', seed, { min: 0, max: MAX_SEED });
    const first = splitMix64(BigInt(seed) + SPLITMIX_GAMMA);
    const second = splitMix64(BigInt(seed) + 2n * SPLITMIX_GAMMA);
    this.s0 = Number(first & 0xffffffffn);
    this.s1 = Number(first >> 32n);
    this.s2 = Number(second & 0xffffffffn);
    this.s3 = Number(second >> 32n);
  }

  /** The next unsigned 32-bit integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** A uniform float in [0, 1) with 53 random bits, made of two 32-bit outputs (27 + 26 high bits). */
  nextFloat(): number {
    const high = this.nextUint32() >>> 5;
    const low = this.nextUint32() >>> 6;
    return (high * TWO_POW_26 + low) / TWO_POW_53;
  }
}
