import type { CpuPrecision } from '../precision';
import { CpuStorage } from '../storage';

/**
 * A fused kernel's intermediates, kept between calls of the same sizes at precision 'f32' (one decode step after
 * another), so a step allocates none; the kernels size their work by these storages.
 */
export class KeptScratch {
  readonly #kept: (CpuStorage | undefined)[] = [];

  /**
   * Storage of exactly `length` values for intermediate `slot`: kept at precision 'f32', else new (the caller
   * frees what this pushes onto `owned`).
   */
  get(slot: number, length: number, precision: CpuPrecision, owned: CpuStorage[]): CpuStorage {
    if (precision !== 'f32') {
      const fresh = new CpuStorage('f32', length, false, precision);
      owned.push(fresh);
      return fresh;
    }
    const current = this.#kept[slot];
    if (current && current.length === length) return current;
    current?.free();
    const sized = new CpuStorage('f32', length, false);
    this.#kept[slot] = sized;
    return sized;
  }
}
