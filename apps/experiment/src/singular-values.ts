/** Sweeps of one-sided Jacobi after which it stops even if columns are not yet orthogonal (they are far sooner). */
const MAX_SWEEPS = 60;

/**
 * The singular values of the row-major matrix `a` [rows, cols], largest first, by one-sided Jacobi
 * rotations in float64: columns are rotated in pairs until every pair is orthogonal, and the column
 * norms are then the singular values. Hand-written because no maintained npm library does a small
 * dense SVD without pulling in a whole numerics stack; it is exact to rounding for the matrix sizes
 * experiments use (attention maps up to a few hundred rows).
 */
export function singularValues(a: ArrayLike<number>, rows: number, cols: number): Float64Array {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new Error(`singularValues: rows and cols must be positive integers, got ${rows} x ${cols}`);
  }
  if (a.length !== rows * cols) {
    throw new Error(`singularValues: expected ${rows} x ${cols} = ${rows * cols} values, got ${a.length}`);
  }
  // Work on the columns of aᵀ when the matrix is wide, so there are never more columns than rows.
  const [m, n] = rows >= cols ? [rows, cols] : [cols, rows];
  const column = (j: number) =>
    Float64Array.from({ length: m }, (_, i) => (rows >= cols ? a[i * cols + j] : a[j * cols + i]));
  const cs = Array.from({ length: n }, (_, j) => column(j));
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const x = cs[p];
        const y = cs[q];
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        for (let i = 0; i < m; i++) {
          alpha += x[i] * x[i];
          beta += y[i] * y[i];
          gamma += x[i] * y[i];
        }
        if (Math.abs(gamma) <= 1e-15 * Math.sqrt(alpha * beta) || gamma === 0) continue;
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        const t = Math.sign(zeta || 1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const s = c * t;
        for (let i = 0; i < m; i++) {
          const xi = x[i];
          x[i] = c * xi - s * y[i];
          y[i] = s * xi + c * y[i];
        }
      }
    }
    if (!rotated) break;
  }
  const values = Float64Array.from(cs, (col) => Math.hypot(...col));
  return values.sort().reverse();
}
