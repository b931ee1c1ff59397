import { broadcastStrides, type Shape, shapesEqual, sizeOf } from '@loom/tensor';
import { forEachOuterIndex, mergeAxes } from './merged-axes';

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
  if (outShape.some((d) => d === 0)) return;
  if (inputs.every((shape) => shapesEqual(shape, outShape))) {
    // Nothing broadcast: one run over every element, what the merge below finds, without building it.
    const count = inputs.length;
    visit(
      0,
      new Int32Array(count),
      sizeOf(outShape),
      new Int32Array(count).fill(1),
      1,
      new Int32Array(count),
    );
    return;
  }
  const { sizes, strides } = mergeAxes(
    outShape,
    inputs.map((s) => broadcastStrides(s, outShape)),
  );
  // The innermost merged axis is the run, the one before it the rows of a block; the rest are walked by index.
  const last = sizes.length - 1;
  const run = sizes[last] ?? 1;
  const rows = sizes[last - 1] ?? 1;
  const steps = Int32Array.from(strides.map((s) => s[last] ?? 0));
  const rowSteps = Int32Array.from(strides.map((s) => s[last - 1] ?? 0));
  let block = 0;
  forEachOuterIndex(sizes, Math.max(0, last - 1), strides, new Array(inputs.length).fill(0), (offsets) => {
    visit(block++ * rows * run, offsets, run, steps, rows, rowSteps);
  });
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
