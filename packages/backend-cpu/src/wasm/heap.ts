import { type Block, BlockAllocator } from './allocator';
import { type ImportedMemory, ModuleBuilder } from './module-builder';
import { ValType } from './opcodes';

const PAGE_BYTES = 65536;
/** Bytes below this address are never handed out (address 0 stays an obvious bad pointer). */
const RESERVED_BYTES = 1024;
const INITIAL_PAGES = 256;
/** Growth is at least this many pages (16 MiB) or a quarter of the current size, to grow rarely. */
const MIN_GROW_PAGES = 256;
/** Maxima tried for a shared memory, largest first: some hosts cannot reserve 4 GiB. */
const SHARED_MAXIMA = [65536, 16384, 4096] as const;
const UNSHARED_MAXIMUM = 65536;

/**
 * One WebAssembly memory holding tensor storage and kernel scratch, with a size-class
 * allocator. A shared memory (SharedArrayBuffer) keeps views valid when it grows and can be
 * used by worker threads; an unshared one detaches its buffer on growth, so views must be
 * re-created when `generation` changes.
 */
export class WasmHeap {
  readonly #allocator: BlockAllocator;
  #generation = 0;
  /** Zeroes `bytes` bytes from `offset` (memory.fill: a typed array's fill over shared memory ran 5-13x slower). */
  readonly #zero: (offset: number, bytes: number) => void;

  private constructor(
    readonly memory: WebAssembly.Memory,
    readonly limits: ImportedMemory,
  ) {
    this.#allocator = new BlockAllocator(RESERVED_BYTES, memory.buffer.byteLength, (end) => this.#grow(end));
    this.#zero = zeroFunction(memory, limits);
  }

  /** A heap over a shared memory when the host allows one, else over an unshared memory. */
  static create(): WasmHeap {
    if (typeof SharedArrayBuffer === 'function') {
      for (const maximumPages of SHARED_MAXIMA) {
        const limits = { initialPages: INITIAL_PAGES, maximumPages, shared: true };
        const memory = tryMemory(limits);
        if (memory) return new WasmHeap(memory, limits);
      }
    }
    const limits = { initialPages: INITIAL_PAGES, maximumPages: UNSHARED_MAXIMUM, shared: false };
    const memory = tryMemory(limits);
    if (!memory) throw new Error('WebAssembly.Memory: cannot create a memory of 16 MiB');
    return new WasmHeap(memory, limits);
  }

  /** Whether the memory is shared (views survive growth; workers can use it). */
  get shared(): boolean {
    return this.limits.shared;
  }

  /** Incremented every time the memory grows. */
  get generation(): number {
    return this.#generation;
  }

  /** Current size of the memory in bytes. */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * A block of at least `bytes` bytes, or undefined when the memory is full. Its first `bytes`
   * bytes are zero unless `zeroed` is false (for callers that overwrite all of them).
   */
  alloc(bytes: number, zeroed = true): Block | undefined {
    const result = this.#allocator.alloc(bytes);
    if (!result) return undefined;
    const { offset } = result.block;
    if (zeroed && !result.fresh) this.#zero(offset, bytes);
    return result.block;
  }

  free(block: Block): void {
    this.#allocator.free(block);
  }

  #grow(end: number): number | undefined {
    const current = this.memory.buffer.byteLength / PAGE_BYTES;
    const needed = Math.ceil(end / PAGE_BYTES) - current;
    const room = this.limits.maximumPages - current;
    if (needed > room) return undefined;
    const generous = Math.min(room, Math.max(needed, MIN_GROW_PAGES, current >> 2));
    for (const pages of generous > needed ? [generous, needed] : [needed]) {
      try {
        this.memory.grow(pages);
        this.#generation++;
        return this.memory.buffer.byteLength;
      } catch {}
    }
    return undefined;
  }
}

/**
 * zero(offset, bytes) over `memory`, from a module of its own: the heap zeroes reused blocks before the kernel module
 * (which needs the heap) exists.
 */
function zeroFunction(
  memory: WebAssembly.Memory,
  limits: ImportedMemory,
): (offset: number, bytes: number) => void {
  const builder = new ModuleBuilder(limits);
  builder.func('zero', [ValType.i32, ValType.i32], (f) => f.fillMemory(f.params[0], 0, f.params[1]));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(builder.encode()), { env: { memory } });
  return instance.exports.zero as (offset: number, bytes: number) => void;
}

function tryMemory(limits: ImportedMemory): WebAssembly.Memory | undefined {
  try {
    return new WebAssembly.Memory({
      initial: limits.initialPages,
      maximum: limits.maximumPages,
      shared: limits.shared,
    });
  } catch {
    return undefined;
  }
}
