/** x [rows, d] * rsqrt(mean(x^2) + eps) * weight [d]. */
export function rmsnormKernel(x: Float32Array, weight: Float32Array, eps: number, out: Float32Array): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let ss = 0;
    for (let i = 0; i < d; i++) ss += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) out[o + i] = x[o + i] * inv * weight[i];
  }
}

/** (x - mean) * rsqrt(var + eps) * weight + bias over rows of length d. */
export function layernormKernel(
  x: Float32Array,
  weight: Float32Array,
  bias: Float32Array,
  eps: number,
  out: Float32Array,
): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let sum = 0;
    for (let i = 0; i < d; i++) sum += x[o + i];
    const mean = sum / d;
    let ss = 0;
    for (let i = 0; i < d; i++) ss += (x[o + i] - mean) ** 2;
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) out[o + i] = (x[o + i] - mean) * inv * weight[i] + bias[i];
  }
}
