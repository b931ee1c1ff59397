/**
 * Open-addressing hash table from a piece of text to its token ids. Lookups take the piece as a range of a
 * larger string, so the encoder's hot loop neither slices the text nor hashes a new string per piece.
 * A value is one id (>= 0) or, for a piece of several tokens, `-2 - index` into a list of id arrays.
 */
export class PieceTable {
  private keys: (string | undefined)[];
  private hashes: Int32Array;
  private values: Int32Array;
  private lists: Int32Array[] = [];
  private mask: number;
  private count = 0;

  constructor(capacity = 1024) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.mask = slots - 1;
    this.keys = new Array(slots).fill(undefined);
    this.hashes = new Int32Array(slots);
    this.values = new Int32Array(slots);
  }

  get size(): number {
    return this.count;
  }

  /** The hash of the empty string; extend it one code unit at a time with {@link hashStep}. */
  static readonly HASH_SEED = 0x811c9dc5 | 0;

  /** FNV-1a: the hash of a string extended by one UTF-16 code unit. */
  static hashStep(hash: number, codeUnit: number): number {
    return Math.imul(hash ^ codeUnit, 0x01000193);
  }

  /** FNV-1a over the UTF-16 code units of `text[start, end)`. */
  static hash(text: string, start: number, end: number): number {
    let h = PieceTable.HASH_SEED;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h;
  }

  /** The value of `text[start, end)` (whose hash is `hash`): an id, `-2 - list index`, or -1 when absent. */
  get(text: string, start: number, end: number, hash: number): number {
    const { keys, hashes, mask } = this;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const key = keys[slot];
      if (key === undefined) return -1;
      if (hashes[slot] === hash && key.length === length && text.startsWith(key, start))
        return this.values[slot];
    }
  }

  /** The ids of a list value returned by {@link get}. */
  list(value: number): Int32Array {
    return this.lists[-2 - value];
  }

  /** Adds `piece` (not present yet) with its ids. */
  set(piece: string, hash: number, ids: readonly number[]): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let value = ids[0];
    if (ids.length !== 1) {
      value = -2 - this.lists.length;
      this.lists.push(Int32Array.from(ids));
    }
    this.insert(piece, hash, value);
  }

  clear(): void {
    this.keys.fill(undefined);
    this.lists = [];
    this.count = 0;
  }

  private insert(piece: string, hash: number, value: number): void {
    let slot = hash & this.mask;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
    this.keys[slot] = piece;
    this.hashes[slot] = hash;
    this.values[slot] = value;
    this.count++;
  }

  private grow(): void {
    const { keys, hashes, values } = this;
    const slots = keys.length * 2;
    this.mask = slots - 1;
    this.keys = new Array(slots).fill(undefined);
    this.hashes = new Int32Array(slots);
    this.values = new Int32Array(slots);
    this.count = 0;
    keys.forEach((key, slot) => {
      if (key !== undefined) this.insert(key, hashes[slot], values[slot]);
    });
  }
}
