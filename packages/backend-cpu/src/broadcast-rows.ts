import { broadcastStrides, type Shape } from '@loom/tensor';

/**
 * Calls `visit(outOffset, offsets, run, steps, rows, rowSteps)` once per block of contiguous runs
 * of the output: adjacent axes that every input reads contiguously (or not at all) are merged,
 * so a run is as long as possible, and the next merged axis makes the block's `rows` runs. Run
 * r of a block starts at outOffset + r · run in the output and at offsets[j] + r · rowSteps[j]
 * in input j, which advances by steps[j] (1, or 0 where broadcast) along the run.
 */
export function forEachRowBlock(
  outShape: Shape,
  inputs: readonly Shape[],
  visit: (
    outOffset: number,
    offsets: Int32Array,
    run: number,
    steps: Int32Array,
    rows: number,
    rowSteps: Int32Array,
  ) => void,
): void {
  const all = inputs.map((s) => broadcastStrides(s, outShape));
  const dims: number[] = [];
  const strides: number[][] = inputs.map(() => []);
  for (let axis = outShape.length - 1; axis >= 0; axis--) {
    const size = outShape[axis];
    if (size === 1) continue;
    const last = dims.length - 1;
    const mergeable =
      last >= 0 &&
      all.every((s, j) => {
        const inner = strides[j][last];
        return (s[axis] === 0 && inner === 0) || (inner !== 0 && s[axis] === inner * dims[last]);
      });
    if (mergeable) {
      dims[last] *= size;
    } else {
      dims.push(size);
      all.forEach((s, j) => {
        strides[j].push(s[axis]);
      });
    }
  }
  const offsets = new Int32Array(inputs.length);
  if (outShape.some((d) => d === 0)) return;
  // dims[0] is the innermost merged axis (the run), dims[1] the rows of a block; the rest are walked with an odometer.
  const run = dims[0] ?? 1;
  const rows = dims[1] ?? 1;
  const steps = Int32Array.from(strides.map((s) => s[0] ?? 0));
  const rowSteps = Int32Array.from(strides.map((s) => s[1] ?? 0));
  const outer = dims.slice(2);
  const index = new Int32Array(outer.length);
  let blocks = 1;
  for (const d of outer) blocks *= d;
  for (let block = 0; block < blocks; block++) {
    visit(block * rows * run, offsets, run, steps, rows, rowSteps);
    for (let k = 0; k < outer.length; k++) {
      index[k]++;
      for (let j = 0; j < offsets.length; j++) offsets[j] += strides[j][k + 2];
      if (index[k] < outer[k]) break;
      for (let j = 0; j < offsets.length; j++) offsets[j] -= strides[j][k + 2] * outer[k];
      index[k] = 0;
    }
  }
}

/**
 * Calls `visit(outOffset, inputOffsets, run, steps)` once per contiguous run of the output, in
 * order (`forEachRowBlock`, a run at a time).
 */
export function forEachRow(
  outShape: Shape,
  inputs: readonly Shape[],
  visit: (outOffset: number, offsets: Int32Array, run: number, steps: Int32Array) => void,
): void {
  const rowOffsets = new Int32Array(inputs.length);
  forEachRowBlock(outShape, inputs, (outOffset, offsets, run, steps, rows, rowSteps) => {
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < offsets.length; j++) rowOffsets[j] = offsets[j] + r * rowSteps[j];
      visit(outOffset + r * run, rowOffsets, run, steps);
    }
  });
}
