import { broadcastStrides, type Shape } from '@loom/tensor';

/**
 * Calls `visit(outOffset, inputOffsets, run, steps)` once per contiguous run of the output:
 * adjacent axes that every input reads contiguously (or not at all) are merged, so a run is
 * as long as possible. `steps[j]` is 1 when input j advances along the run and 0 when it is
 * broadcast across it.
 */
export function forEachRow(
  outShape: Shape,
  inputs: readonly Shape[],
  visit: (outOffset: number, offsets: Int32Array, run: number, steps: Int32Array) => void,
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
  if (dims.length === 0) {
    visit(0, offsets, 1, new Int32Array(inputs.length));
    return;
  }
  // dims[0] is the innermost merged axis; the rest are walked with an odometer.
  const run = dims[0];
  const steps = Int32Array.from(strides.map((s) => s[0]));
  const outer = dims.slice(1);
  const index = new Int32Array(outer.length);
  let rows = 1;
  for (const d of outer) rows *= d;
  for (let r = 0; r < rows; r++) {
    visit(r * run, offsets, run, steps);
    for (let k = 0; k < outer.length; k++) {
      index[k]++;
      for (let j = 0; j < offsets.length; j++) offsets[j] += strides[j][k + 1];
      if (index[k] < outer[k]) break;
      for (let j = 0; j < offsets.length; j++) offsets[j] -= strides[j][k + 1] * outer[k];
      index[k] = 0;
    }
  }
}
