/** Axes to walk, outermost first, with each operand's element stride along every one of them. */
export interface MergedAxes {
  readonly sizes: number[];
  /** strides[j][axis]: operand j's step along `axis` (0 where it is broadcast). */
  readonly strides: number[][];
}

/**
 * The same walk over fewer axes: axes of size 1 dropped, and each axis merged into the one
 * before it where every operand steps over it contiguously (its stride on the outer axis is
 * its stride on the inner one times the inner size; a broadcast operand, 0 on both, merges
 * too), so runs and blocks are as long as the layouts allow. Every size must be at least 1.
 */
export function mergeAxes(sizes: readonly number[], strides: readonly (readonly number[])[]): MergedAxes {
  // Plain loops, not every/forEach: this runs for every small copy and elementwise op of a decode step.
  const merged: MergedAxes = { sizes: [], strides: strides.map(() => []) };
  const operands = strides.length;
  for (let axis = 0; axis < sizes.length; axis++) {
    const size = sizes[axis];
    if (size === 1) continue;
    const last = merged.sizes.length - 1;
    let contiguous = last >= 0;
    for (let j = 0; j < operands && contiguous; j++)
      contiguous = merged.strides[j][last] === strides[j][axis] * size;
    if (contiguous) {
      merged.sizes[last] *= size;
      for (let j = 0; j < operands; j++) merged.strides[j][last] = strides[j][axis];
    } else {
      merged.sizes.push(size);
      for (let j = 0; j < operands; j++) merged.strides[j].push(strides[j][axis]);
    }
  }
  return merged;
}

/**
 * Calls `visit(offsets)` for every index of the first `axes` axes of `sizes`, in row-major order
 * (an odometer over those axes), with each operand's offset: `starts[j]` plus its strides times
 * the index. `offsets` is one array, updated in place between calls. Sizes are at least 1.
 */
export function forEachOuterIndex(
  sizes: readonly number[],
  axes: number,
  strides: readonly (readonly number[])[],
  starts: readonly number[],
  visit: (offsets: Int32Array) => void,
): void {
  let count = 1;
  for (let axis = 0; axis < axes; axis++) count *= sizes[axis];
  const index = new Int32Array(axes);
  const offsets = Int32Array.from(starts);
  for (let n = 0; n < count; n++) {
    visit(offsets);
    for (let axis = axes - 1; axis >= 0; axis--) {
      index[axis]++;
      for (let j = 0; j < offsets.length; j++) offsets[j] += strides[j][axis];
      if (index[axis] < sizes[axis]) break;
      for (let j = 0; j < offsets.length; j++) offsets[j] -= strides[j][axis] * sizes[axis];
      index[axis] = 0;
    }
  }
}
