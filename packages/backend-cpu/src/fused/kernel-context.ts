import type { DataId, TensorInfo } from '@loom/tensor';
import type { CpuPrecision, FloatArray } from '../precision';
import type { CpuStorage } from '../storage';
import type { CpuKernelSettings } from '../wasm/settings';

/**
 * What the fused kernels' table entries need from the backend that runs them: its settings and
 * precision, its tensors' storage, and new outputs. Each kernel family takes one and returns its
 * entries of `FusedKernels` (`pointwiseKernels(ctx)`, `normKernels(ctx)`, ...); the backend joins them.
 */
export interface CpuKernelContext {
  /** How the backend runs its kernels: its threads and whether WebAssembly is on. */
  readonly settings: CpuKernelSettings;
  readonly precision: CpuPrecision;
  /** Storage of `x`; throws if it belongs to another backend or was released. */
  get(x: TensorInfo): CpuStorage;
  /** The values of f32 tensor `x` (a view: take it after allocating the output). */
  f32(x: TensorInfo): FloatArray;
  /** Allocates an f32 output of `count` elements, runs `fill` on it (which writes every element) and returns its id. */
  out(count: number, fill: (out: CpuStorage) => void): DataId;
}
