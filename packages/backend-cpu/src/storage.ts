import { allocHost, type DType, type HostArray } from '@loom/tensor';
import type { CpuPrecision, FloatArray } from './precision';
import type { Block } from './wasm/allocator';
import type { WasmHeap } from './wasm/heap';
import { wasmRuntime } from './wasm/runtime';

/** Throws unless `length`, a storage's element count, is a non-negative integer. */
export function checkStorageLength(length: number): void {
  if (!Number.isInteger(length) || length < 0) {
    throw new Error(`CpuStorage: expected a non-negative integer length, got ${length}`);
  }
}

/** Bytes `length` values of `dtype` take at `precision`: 8 each for f32 values kept in float64, else 4. */
export function storageBytes(dtype: DType, length: number, precision: CpuPrecision): number {
  return length * (precision === 'f64' && dtype === 'f32' ? 8 : 4);
}

/** Where a storage's values live. */
type Placement =
  | { readonly kind: 'host'; readonly values: HostArray }
  | {
      readonly kind: 'heap';
      readonly heap: WasmHeap;
      readonly block: Block;
      values: HostArray;
      generation: number;
      /** Whether `dropped` holds it (only storages still in use at a sweep of `young`). */
      registered: boolean;
    }
  | { readonly kind: 'freed' };

/** Returns heap blocks of storages that were dropped without `free()`. */
const dropped = new FinalizationRegistry<{ heap: WasmHeap; block: Block }>(({ heap, block }) =>
  heap.free(block),
);

/**
 * Heap storages created since the last sweep. Registering with `dropped` and unregistering again cost 0.2-0.9 µs
 * a storage, for most storages in vain: an op's intermediates, freed by a scope within microseconds (a chain of
 * element-wise ops on [1, 1, 768], median µs an op: Node 20 3.69 -> 3.50, Node 26 3.86 -> 3.33). So a storage
 * is registered only if it is still in use at the next sweep: at the end of the current task (a microtask), or
 * once YOUNG_LIMIT storages wait. A storage dropped before the sweep is held here until then, registered, and
 * its block returned once it is collected.
 */
const young: CpuStorage[] = [];
const YOUNG_LIMIT = 256;

function sweepYoung(): void {
  for (const storage of young) storage.register();
  young.length = 0;
}

/**
 * Storage of one tensor. Where WebAssembly SIMD is available the values live in the shared
 * WebAssembly heap (so matmul kernels and worker threads use them without copying); else, or
 * when the heap is full, in an ordinary typed array. At precision 'f64' f32-dtype values live
 * in a host Float64Array, never in the heap. Kernels take views (`f32`, `i32`, `values`) at
 * the start of a call, after allocating their outputs, and do not keep them across calls. New
 * storage holds zeros unless created with `zeroed` false, for outputs a kernel overwrites
 * entirely.
 */
export class CpuStorage {
  #placement: Placement;
  /** Bytes per element: 8 for float64 storage, else 4. */
  readonly #width: number;

  constructor(
    readonly dtype: DType,
    readonly length: number,
    zeroed = true,
    precision: CpuPrecision = 'f32',
  ) {
    this.#width = storageBytes(dtype, 1, precision);
    checkStorageLength(length);
    if (this.#width === 8) {
      // f32 values kept in float64: on the host.
      this.#placement = { kind: 'host', values: new Float64Array(length) };
      return;
    }
    const heap = length > 0 ? wasmRuntime()?.heap : undefined;
    const block = heap?.alloc(length * 4, zeroed);
    if (heap && block) {
      this.#placement = {
        kind: 'heap',
        heap,
        block,
        values: view(heap, block, dtype, length),
        generation: heap.generation,
        registered: false,
      };
      if (young.length === 0) queueMicrotask(sweepYoung);
      if (young.push(this) >= YOUNG_LIMIT) sweepYoung();
    } else {
      this.#placement = { kind: 'host', values: allocHost(dtype, length) };
    }
  }

  get values(): HostArray {
    const p = this.#placement;
    if (p.kind === 'host') return p.values;
    if (p.kind === 'freed') throw new Error(`CpuStorage: ${this.dtype}[${this.length}] used after free()`);
    if (p.generation !== p.heap.generation && !p.heap.shared) {
      p.values = view(p.heap, p.block, this.dtype, this.length);
      p.generation = p.heap.generation;
    }
    return p.values;
  }

  /** The values of f32-dtype storage: a Float32Array, or a Float64Array at precision 'f64'. */
  get f32(): FloatArray {
    const values = this.values;
    if (values instanceof Int32Array) throw new Error(`expected f32 storage, got ${this.dtype}`);
    return values;
  }

  get i32(): Int32Array {
    const values = this.values;
    if (!(values instanceof Int32Array)) throw new Error(`expected i32 storage, got ${this.dtype}`);
    return values;
  }

  get bytes(): number {
    return this.length * this.#width;
  }

  /** Byte address of the values in the WebAssembly heap, or undefined when they live on the host. */
  get address(): number | undefined {
    const p = this.#placement;
    if (p.kind === 'freed') throw new Error(`CpuStorage: ${this.dtype}[${this.length}] used after free()`);
    return p.kind === 'heap' ? p.block.offset : undefined;
  }

  /** Has `dropped` return the block if this storage is collected before `free()`; for `sweepYoung`. */
  register(): void {
    const p = this.#placement;
    if (p.kind !== 'heap' || p.registered) return;
    dropped.register(this, { heap: p.heap, block: p.block }, this);
    p.registered = true;
  }

  /** Returns the memory to its allocator; the storage must not be used afterwards. */
  free(): void {
    const p = this.#placement;
    if (p.kind === 'heap') {
      if (p.registered) dropped.unregister(this);
      p.heap.free(p.block);
    }
    this.#placement = { kind: 'freed' };
  }
}

function view(heap: WasmHeap, block: Block, dtype: DType, length: number): HostArray {
  const buffer = heap.memory.buffer;
  return dtype === 'f32'
    ? new Float32Array(buffer, block.offset, length)
    : new Int32Array(buffer, block.offset, length);
}
