/**
 * Spreads `count` workgroups over x and y so neither exceeds `maxPerDimension`; kernels
 * recover the flat workgroup index as `wid.y * nwg.x + wid.x` and skip the surplus.
 */
export function gridFor(count: number, maxPerDimension: number): [number, number, number] {
  if (count <= maxPerDimension) return [count, 1, 1];
  const y = Math.ceil(count / maxPerDimension);
  if (y > maxPerDimension) {
    throw new Error(
      `webgpu: ${count} workgroups exceed this device's limit of ${maxPerDimension}² per dispatch; split the tensor`,
    );
  }
  return [Math.ceil(count / y), y, 1];
}
