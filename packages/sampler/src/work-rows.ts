/**
 * Float64 rows the warpers and the draw work in, kept between calls and grown on demand: a row of a 32 000-token
 * vocabulary is 256 KB, which a fresh allocation zeroes on every token. Each purpose has its own row, and no
 * function that takes one calls another that takes the same.
 */
const rows: Record<'weights' | 'candidates', Float64Array> = {
  weights: new Float64Array(0),
  candidates: new Float64Array(0),
};

/** The work row for `purpose`, at least `length` values long (its contents are left over from earlier calls). */
export function workRow(purpose: keyof typeof rows, length: number): Float64Array {
  if (rows[purpose].length < length) rows[purpose] = new Float64Array(length);
  return rows[purpose];
}
