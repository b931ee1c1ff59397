/** A row-major [rows, cols] matrix transposed to [cols, rows]. */
export function transpose(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) out[col * rows + row] = data[row * cols + col];
  }
  return out;
}

/** Columns [begin, end) of a row-major [rows, cols] matrix, as a [rows, end - begin] matrix. */
export function sliceColumns(
  data: Float32Array,
  rows: number,
  cols: number,
  begin: number,
  end: number,
): Float32Array {
  const width = end - begin;
  const out = new Float32Array(rows * width);
  for (let row = 0; row < rows; row++)
    out.set(data.subarray(row * cols + begin, row * cols + end), row * width);
  return out;
}
