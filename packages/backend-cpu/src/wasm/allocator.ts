import { BLOCK_ALIGN, sizeClass } from './size-classes';

/** A block handed out by the allocator: its byte offset, its size class and its rounded size. */
export interface Block {
  readonly offset: number;
  readonly classIndex: number;
  readonly size: number;
}

/**
 * Size-class free-list allocator over a region [base, end) that can be extended. Freed blocks
 * go to the list of their class and are reused first; new blocks come from the top. Blocks are
 * never split or merged, so freeing and reusing are O(1).
 */
export class BlockAllocator {
  readonly #free: number[][] = [];
  #top: number;

  constructor(
    base: number,
    private end: number,
    /** Makes room up to at least `end` bytes; returns the new end, or undefined when it cannot. */
    private readonly extend: (end: number) => number | undefined,
  ) {
    this.#top = Math.ceil(base / BLOCK_ALIGN) * BLOCK_ALIGN;
  }

  /**
   * A block of at least `bytes` bytes; `fresh` tells whether it was never used (and so still
   * holds zeros). Undefined when the region cannot grow enough.
   */
  alloc(bytes: number): { block: Block; fresh: boolean } | undefined {
    const cls = sizeClass(bytes);
    const reused = this.#free[cls.index]?.pop();
    if (reused !== undefined) {
      return { block: { offset: reused, classIndex: cls.index, size: cls.size }, fresh: false };
    }
    const offset = this.#top;
    if (offset + cls.size > this.end) {
      const end = this.extend(offset + cls.size);
      if (end === undefined) return undefined;
      this.end = end;
    }
    this.#top = offset + cls.size;
    return { block: { offset, classIndex: cls.index, size: cls.size }, fresh: true };
  }

  /** Returns a block to its free list. */
  free(block: Block): void {
    const list = this.#free[block.classIndex];
    if (list) list.push(block.offset);
    else this.#free[block.classIndex] = [block.offset];
  }
}
