import { load, op, simdLoad } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const I = ValType.i32;

/**
 * Copies `rows` runs of `run` 4-byte elements (f32 or i32: bits are copied, not values) from
 * src + r · srcStride to dst + r · dstStride: 16 bytes at a time, then the last run % 4.
 * Parameters: byte addresses of the source and destination, the number of rows, the row length
 * and the row strides of source and destination (all in 4-byte elements).
 */
export const COPY_ROWS = kernel({
  name: 'copy_rows_32',
  params: i32('src', 'dst', 'rows', 'run', 'srcStride', 'dstStride'),
  emit(f, { src, dst, rows, run, srcStride, dstStride }) {
    const [row, j, vectorBytes, runBytes] = f.locals(I, 4);
    f.set(vectorBytes, op('i32.shl', op('i32.and', run, -4), 2));
    f.set(runBytes, op('i32.shl', run, 2));
    f.set(srcStride, op('i32.shl', srcStride, 2));
    f.set(dstStride, op('i32.shl', dstStride, 2));
    f.for(row, 0, rows, 1, () => {
      f.for(j, 0, vectorBytes, 16, () =>
        f.storeV128(op('i32.add', dst, j), simdLoad('v128.load', op('i32.add', src, j))),
      );
      f.for(j, vectorBytes, runBytes, 4, () =>
        f.store('f32.store', op('i32.add', dst, j), load('f32.load', op('i32.add', src, j))),
      );
      f.set(src, op('i32.add', src, srcStride));
      f.set(dst, op('i32.add', dst, dstStride));
    });
  },
});

export const COPY_ROWS_KERNEL = COPY_ROWS.name;
