import { bf16ToF32, type FusedKernels, f16ToF32, isQuantFormat, quantizedShape, sizeOf } from '@loom/tensor';
import { decodeQuantRow } from './decode-blocks';
import type { CpuKernelContext } from './kernel-context';

/**
 * Rows of a compact table decoded to f32 (`weightRows`, the embedding lookup of a quantized or 16-bit checkpoint):
 * each id's row decoded alone in JavaScript (a lookup reads one row a token, so no heap kernel pays), rows of
 * out-of-range ids zeros.
 */
export function weightRowsKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'weightRows'> {
  return {
    weightRows: (ids, data, scales, format) => {
      const [rows, width] = data.shape;
      const dim = isQuantFormat(format) ? quantizedShape(format, scales.shape)[1] : 2 * width;
      return ctx.out(sizeOf(ids.shape) * dim, (o) => {
        // Views taken after the output's allocation, which may move the heap.
        const [out, idValues, words] = [o.f32, ctx.get(ids).i32, ctx.get(data).i32];
        const bytes = new Uint8Array(words.buffer, words.byteOffset, words.length * 4);
        // A 16-bit table passes its words again as scales, which are not f32: read only a quantized table's.
        const scaleValues = isQuantFormat(format) ? ctx.get(scales).f32 : undefined;
        idValues.forEach((id, i) => {
          if (id < 0 || id >= rows) out.fill(0, i * dim, (i + 1) * dim);
          else if (isQuantFormat(format) && scaleValues !== undefined) {
            decodeQuantRow(format, bytes, scaleValues, id, dim, out, i * dim);
          } else {
            const halves = new Uint16Array(words.buffer, words.byteOffset + 4 * id * width, dim);
            out.set(format === 'bf16' ? bf16ToF32(halves) : f16ToF32(halves), i * dim);
          }
        });
      });
    },
  };
}
