/**
 * WebGPU usage and map-mode bit flags, spelled out so the backend does not depend on the
 * `GPUBufferUsage` and `GPUMapMode` globals (which Node only has after installing them).
 */
export const BufferUsage = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
} as const;

export const MapMode = { READ: 0x0001 } as const;

/** Usage of every tensor buffer: bound as storage, copied into by uploads and out of by reads. */
export const STORAGE_USAGE = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
/** Usage of the staging buffers `read` maps. */
export const STAGING_USAGE = BufferUsage.MAP_READ | BufferUsage.COPY_DST;
/** Usage of the per-batch kernel parameter buffers. */
export const UNIFORM_USAGE = BufferUsage.UNIFORM | BufferUsage.COPY_DST;

export const ShaderStage = { COMPUTE: 0x4 } as const;
