import { assertDType } from './dtype';
import { sameBackend } from './guards';
import { showShape } from './shape';
import type { Tensor } from './tensor';

/**
 * Embedding lookup: rows of table [rows, ...rest] picked by i32 `ids` of any shape;
 * the result is [...ids.shape, ...rest]. Out-of-range ids give rows of zeros.
 */
export function gather(table: Tensor, ids: Tensor): Tensor {
  const backend = sameBackend('gather', table, ids);
  assertDType('gather (ids)', ids.dtype, ['i32']);
  if (table.rank < 1) throw new Error('gather: the table must have at least one axis, got a scalar');
  const outShape = [...ids.shape, ...table.shape.slice(1)];
  const id = backend.gather(table.info('gather'), ids.info('gather'));
  return table.adopt(id, outShape, table.dtype);
}

/**
 * The gradient of `gather`: out [numRows, ...rest] starts at zero and each row of
 * src [...ids.shape, ...rest] is added to out[ids[i]]. Out-of-range ids are skipped.
 */
export function scatterAdd(src: Tensor, ids: Tensor, numRows: number): Tensor {
  const backend = sameBackend('scatterAdd', src, ids);
  assertDType('scatterAdd (ids)', ids.dtype, ['i32']);
  assertDType('scatterAdd', src.dtype, ['f32']);
  const leading = src.shape.slice(0, ids.rank);
  if (leading.length !== ids.rank || leading.some((d, i) => d !== ids.shape[i])) {
    throw new Error(
      `scatterAdd: source ${showShape(src.shape)} must start with the ids shape ${showShape(ids.shape)}`,
    );
  }
  const outShape = [numRows, ...src.shape.slice(ids.rank)];
  const id = backend.scatterAdd(src.info('scatterAdd'), ids.info('scatterAdd'), numRows);
  return src.adopt(id, outShape, src.dtype);
}
