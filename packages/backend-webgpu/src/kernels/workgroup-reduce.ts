/**
 * WGSL function `name(v, lid) -> T` that combines one value per thread across a workgroup of
 * `size` threads (a power of two) by a shared-memory tree and returns the result to every
 * thread. `combine` is an expression of `a` and `b`. Call it from uniform control flow.
 */
export function workgroupReduce(name: string, type: string, size: number, combine: string): string {
  return `
var<workgroup> ${name}_scratch: array<${type}, ${size}>;
fn ${name}(v: ${type}, lid: u32) -> ${type} {
  ${name}_scratch[lid] = v;
  workgroupBarrier();
  for (var s = ${size / 2}u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let a = ${name}_scratch[lid];
      let b = ${name}_scratch[lid + s];
      ${name}_scratch[lid] = ${combine};
    }
    workgroupBarrier();
  }
  let r = ${name}_scratch[0];
  workgroupBarrier();
  return r;
}`;
}

/** Reduction sizes from which a row gets a whole workgroup instead of one thread. */
export const WORKGROUP_ROW_THRESHOLD = 128;

/**
 * Threads for a workgroup that owns one row of `width` values: a power of two in [32, max],
 * giving each thread about four values so short rows do not pay for idle threads and barriers.
 */
export function rowWorkgroupSize(width: number, max: number): number {
  let size = 32;
  while (size * 8 <= width && size * 2 <= max) size *= 2;
  return size;
}
