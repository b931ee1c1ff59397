import type { GpuRuntime } from '../runtime';
import { type RowStrategy, workgroupPerOutput } from './matvec';
import { ADDEND_TERM, type Addend } from './product-addend';
import { entryPoint } from './program';
import { rowWorkgroupSize } from './workgroup-reduce';

/** How a product's outputs are summed (see `outputSums`): the kernel's WGSL, its workgroup size and count. */
export interface OutputSums {
  readonly wg: number;
  readonly workgroups: number;
  code(): string;
}

/**
 * A kernel writing out[o] for each output o < p.count of a [rows, n] product, (r, j) = (o / p.n, o % p.n), as the sum
 * `loop(first, step)` adds into `acc` over a row's `units` (blocks, words), plus `addend`: on a CPU rasteriser
 * (`strategy` 'thread') a thread per output takes them all (loop('0u', '1u')); on a GPU a workgroup per output
 * spreads them over its threads (loop('lid', wg)), which then add up their sums, so a row is read by neighbouring
 * threads at once.
 */
export function outputSums(
  rt: GpuRuntime,
  strategy: RowStrategy,
  count: number,
  units: number,
  loop: (first: string, step: string) => string,
  addend: Addend = 'none',
): OutputSums {
  const setup = `  if (o >= p.count) { return; }
  let r = o / p.n;
  let j = o % p.n;
  var acc = 0.0;`;
  if (strategy === 'thread') {
    const wg = rt.limits.workgroupSize;
    return {
      wg,
      workgroups: Math.ceil(count / wg),
      code: () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
${setup}
  ${loop('0u', '1u')}
  out[o] = ${ADDEND_TERM[addend]}acc;
}`,
    };
  }
  const wg = rowWorkgroupSize(units, rt.limits.workgroupSize);
  return {
    wg,
    workgroups: count,
    code: () =>
      workgroupPerOutput(
        wg,
        strategy,
        `  let o = gid;\n${setup}`,
        loop('lid', `${wg}u`),
        `${ADDEND_TERM[addend]}total`,
      ),
  };
}
