import { type Local, op } from './expr';
import type { FunctionBuilder } from './function-builder';
import { ValType } from './opcodes';

/** The byte lengths of one row: all of it, and its whole 4-value vectors (the rest is size % 4 values). */
export interface RowBytes {
  readonly row: Local;
  readonly vectors: Local;
}

/**
 * The loop of a kernel that reduces each row of x [rows, size] (f32) to one 4-byte value of out: `body` runs once per
 * row with x at the row's first value and out at its slot, then both move to the next row.
 */
export function forEachRowToOne(
  f: FunctionBuilder,
  {
    x,
    out,
    rows,
    size,
  }: { readonly x: Local; readonly out: Local; readonly rows: Local; readonly size: Local },
  body: (bytes: RowBytes) => void,
): void {
  const [row, rowBytes, vectorBytes] = f.locals(ValType.i32, 3);
  f.set(rowBytes, op('i32.shl', size, 2));
  f.set(vectorBytes, op('i32.shl', op('i32.and', size, -4), 2));
  f.for(row, 0, rows, 1, () => {
    body({ row: rowBytes, vectors: vectorBytes });
    f.set(x, op('i32.add', x, rowBytes));
    f.set(out, op('i32.add', out, 4));
  });
}
