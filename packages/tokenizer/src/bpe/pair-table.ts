/** Marks "no merge" where a priority is expected. */
export const NO_MERGE = 0x7fffffff;

/**
 * Open-addressing hash table from a pair of token ids `(left, right)` to the merge they make: its priority
 * (lower merges first) and the id of the merged token.
 */
export class PairTable {
  private readonly keys: Int32Array;
  private readonly values: Int32Array;
  private readonly mask: number;
  private count = 0;

  /** `capacity` is the most entries the table will hold. */
  constructor(capacity: number) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.mask = slots - 1;
    this.keys = new Int32Array(slots * 2).fill(-1);
    this.values = new Int32Array(slots * 2);
  }

  /** Adds a merge unless the pair already has one (the first one given wins); returns whether it was added. */
  add(left: number, right: number, priority: number, merged: number): boolean {
    let slot = this.home(left, right);
    for (;;) {
      const k = slot * 2;
      if (this.keys[k] === -1) {
        if (this.count * 2 >= this.mask + 1)
          throw new Error('PairTable: more entries than the capacity given');
        this.keys[k] = left;
        this.keys[k + 1] = right;
        this.values[k] = priority;
        this.values[k + 1] = merged;
        this.count++;
        return true;
      }
      if (this.keys[k] === left && this.keys[k + 1] === right) return false;
      slot = (slot + 1) & this.mask;
    }
  }

  /** Priority of the merge of `(left, right)`, or {@link NO_MERGE}. */
  priority(left: number, right: number): number {
    const k = this.find(left, right);
    return k < 0 ? NO_MERGE : this.values[k];
  }

  /** Id made by merging `(left, right)`; only meaningful when {@link priority} is not NO_MERGE. */
  merged(left: number, right: number): number {
    const k = this.find(left, right);
    return k < 0 ? -1 : this.values[k + 1];
  }

  private find(left: number, right: number): number {
    let slot = this.home(left, right);
    for (;;) {
      const k = slot * 2;
      const key = this.keys[k];
      if (key === -1) return -1;
      if (key === left && this.keys[k + 1] === right) return k;
      slot = (slot + 1) & this.mask;
    }
  }

  private home(left: number, right: number): number {
    const h = Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca77);
    return (h ^ (h >>> 15)) & this.mask;
  }
}
