import type { FusedKernels } from '@loom/tensor';
import type { CpuKernelContext } from './kernel-context';

/** Row scatters in place (`writeRows`): each row one typed-array copy, whatever the precision. */
export function writeRowsKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'writeRows'> {
  return {
    writeRows: (target, src, rows) => {
      const [to, from] = [ctx.get(target).values, ctx.get(src).values];
      const width = rows.length === 0 ? 0 : from.length / rows.length;
      rows.forEach((row, i) => {
        to.set(from.subarray(i * width, (i + 1) * width), row * width);
      });
    },
  };
}
