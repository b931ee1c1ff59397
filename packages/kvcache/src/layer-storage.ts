import { type Backend, keep, type Tensor, writeSlice, zeros } from '@loom/tensor';

/** Throws, naming the cache class and the option, unless `value` is an integer of at least `min`. */
export function checkCount(owner: string, name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${owner}: ${name} must be an integer ≥ ${min}, got ${value}`);
  }
  return value;
}

/** Frees the storage of caches that were garbage-collected without `dispose()`. */
const dropped = new FinalizationRegistry<readonly Tensor[]>((storage) => {
  for (const t of storage) t.dispose();
});

/** Keys and values of every layer, each one tensor outside any scope. */
export interface LayerStorage {
  readonly keys: Tensor[];
  readonly values: Tensor[];
}

/**
 * Zeroed keys and values of `numLayers` layers, each `shape`, for the cache `owner`: all or nothing (a failed
 * allocation frees what was made), and freed as a backstop if the owner is garbage-collected undisposed.
 */
export function allocateLayers(
  owner: object,
  numLayers: number,
  shape: readonly number[],
  backend: Backend,
): LayerStorage {
  const storage: Tensor[] = [];
  try {
    for (let i = 0; i < 2 * numLayers; i++) storage.push(keep(zeros(shape, { backend }))); // keys, then values
  } catch (error) {
    for (const t of storage) t.dispose();
    throw error;
  }
  dropped.register(owner, storage, owner);
  return { keys: storage.slice(0, numLayers), values: storage.slice(numLayers) };
}

/** Frees what `allocateLayers` made for `owner`. */
export function releaseLayers(owner: object, storage: LayerStorage): void {
  dropped.unregister(owner);
  for (const t of [...storage.keys, ...storage.values]) t.dispose();
}

/** Copies every layer's keys and values of `from` into `to`, of the same shapes (a cache's clone). */
export function copyLayers(to: LayerStorage, from: LayerStorage): void {
  for (const [layer, k] of from.keys.entries()) writeSlice(to.keys[layer], k, [0, 0, 0, 0]);
  for (const [layer, v] of from.values.entries()) writeSlice(to.values[layer], v, [0, 0, 0, 0]);
}

/** Bytes of backend storage the keys and values hold. */
export function layerBytes(storage: LayerStorage): number {
  return [...storage.keys, ...storage.values].reduce((total, t) => total + t.bytes, 0);
}
