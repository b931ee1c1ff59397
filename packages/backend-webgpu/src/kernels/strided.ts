import type { Shape } from '@loom/tensor';
import { ParamLayout, paramAt } from '../param-layout';

/** An iteration space with one stride list per operand (0 on broadcast axes). */
export interface StridedLayout {
  readonly shape: readonly number[];
  readonly strides: readonly (readonly number[])[];
}

/**
 * Simplifies an iteration space: drops axes of size 1 and merges neighbouring axes that every
 * operand walks contiguously, so most broadcasts run at rank 1 or 2. Always returns rank >= 1.
 */
export function collapse(shape: Shape, strides: readonly (readonly number[])[]): StridedLayout {
  const dims: { size: number; strides: number[] }[] = [];
  shape.forEach((size, axis) => {
    if (size !== 1) dims.push({ size, strides: strides.map((s) => s[axis]) });
  });
  const merged: { size: number; strides: number[] }[] = [];
  for (const dim of dims) {
    const outer = merged[merged.length - 1];
    if (outer?.strides.every((s, i) => s === dim.strides[i] * dim.size)) {
      outer.size *= dim.size;
      outer.strides = dim.strides;
    } else {
      merged.push({ size: dim.size, strides: [...dim.strides] });
    }
  }
  if (merged.length === 0) return { shape: [1], strides: strides.map(() => [0]) };
  return {
    shape: merged.map((d) => d.size),
    strides: strides.map((_, i) => merged.map((d) => d.strides[i])),
  };
}

/** Parameter values of a strided kernel, keyed by field name. */
type StridedValues = Record<string, number | readonly number[]>;

/** Parameters of a strided kernel: `count`, the iteration `shape` and `<name>Strides` per operand. */
export function stridedParams(rank: number, operands: readonly string[]): ParamLayout<StridedValues> {
  let layout: ParamLayout<StridedValues> = new ParamLayout()
    .scalar('count', 'u32')
    .array('shape', 'u32', rank);
  for (const name of operands) layout = layout.array(`${name}Strides`, 'u32', rank);
  return layout;
}

/** Number of points in a layout's iteration space. */
export function countOf(layout: StridedLayout): number {
  return layout.shape.reduce((a, b) => a * b, 1);
}

/** Values for `stridedParams` from a collapsed layout. */
export function stridedValues(layout: StridedLayout, operands: readonly string[]): StridedValues {
  const values: StridedValues = { count: countOf(layout), shape: layout.shape };
  operands.forEach((name, i) => {
    values[`${name}Strides`] = layout.strides[i];
  });
  return values;
}

/**
 * WGSL statements that split flat index `idx` over `p.shape` and accumulate
 * `off_<name>` (u32) for each operand from `p.<name>Strides`.
 */
export function stridedOffsets(rank: number, operands: readonly string[]): string {
  const lines = operands.map((name) => `  var off_${name} = 0u;`);
  lines.push('  var rem = idx;');
  for (let axis = rank - 1; axis >= 0; axis--) {
    const coord = axis === 0 ? 'rem' : `rem % ${paramAt('shape', axis)}`;
    lines.push(`  let c${axis} = ${coord};`);
    if (axis > 0) lines.push(`  rem = rem / ${paramAt('shape', axis)};`);
    for (const name of operands)
      lines.push(`  off_${name} += c${axis} * ${paramAt(`${name}Strides`, axis)};`);
  }
  return lines.join('\n');
}
