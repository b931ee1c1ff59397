import { load, op, simdLoad } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const I = ValType.i32;

/**
 * Copies `planes` planes of `rows` runs of `run` 4-byte elements (f32 or i32: bits are copied,
 * not values) from src + p · srcPlane + r · srcStride to dst + p · dstPlane + r · dstStride: 16
 * bytes at a time, then the last run % 4. Parameters: byte addresses of the source and
 * destination, the numbers of planes and rows, the row length, and the plane and row strides of
 * source and destination (all in 4-byte elements).
 */
export const COPY_ROWS = kernel({
  name: 'copy_rows_32',
  params: i32('src', 'dst', 'planes', 'rows', 'run', 'srcPlane', 'dstPlane', 'srcStride', 'dstStride'),
  emit(f, { src, dst, planes, rows, run, srcPlane, dstPlane, srcStride, dstStride }) {
    const [plane, row, j, vectorBytes, runBytes, s, d] = f.locals(I, 7);
    f.set(vectorBytes, op('i32.shl', op('i32.and', run, -4), 2));
    f.set(runBytes, op('i32.shl', run, 2));
    for (const stride of [srcPlane, dstPlane, srcStride, dstStride]) f.set(stride, op('i32.shl', stride, 2));
    f.for(plane, 0, planes, 1, () => {
      f.set(s, src);
      f.set(d, dst);
      f.for(row, 0, rows, 1, () => {
        f.for(j, 0, vectorBytes, 16, () =>
          f.storeV128(op('i32.add', d, j), simdLoad('v128.load', op('i32.add', s, j))),
        );
        f.for(j, vectorBytes, runBytes, 4, () =>
          f.store('f32.store', op('i32.add', d, j), load('f32.load', op('i32.add', s, j))),
        );
        f.set(s, op('i32.add', s, srcStride));
        f.set(d, op('i32.add', d, dstStride));
      });
      f.set(src, op('i32.add', src, srcPlane));
      f.set(dst, op('i32.add', dst, dstPlane));
    });
  },
});

export const COPY_ROWS_KERNEL = COPY_ROWS.name;
