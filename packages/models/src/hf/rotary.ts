/**
 * The rotary layout difference between Hugging Face Llama checkpoints and Loom.
 *
 * Loom (like Meta's original Llama and llama2.c) applies RoPE to the interleaved pairs (2i, 2i+1) of each head.
 * `transformers` applies it in "rotate-half" form, pairing element i with element i + headDim/2. Its conversion
 * script from Meta's weights (`convert_llama_weights_to_hf.py`) therefore permutes the output rows of q_proj and
 * k_proj, per head: it views the [numHeads·headDim, in] weight as [numHeads, headDim/2, 2, in], swaps the two middle
 * axes and flattens back. So within each head, HF row j (j < headDim/2) is Meta row 2j and HF row headDim/2 + j is
 * Meta row 2j + 1; k_proj is permuted the same way with the key/value head count. Rotate-half RoPE on the permuted
 * projection then gives exactly the interleaved RoPE of the original, and attention scores are unchanged.
 */

function permuteRows(weight: Float32Array, numHeads: number, headDim: number, toLoom: boolean): Float32Array {
  const cols = weight.length / (numHeads * headDim);
  const half = headDim / 2;
  const out = new Float32Array(weight.length);
  for (let head = 0; head < numHeads; head++) {
    for (let j = 0; j < headDim; j++) {
      const hfRow = head * headDim + j;
      const loomRow = head * headDim + (j < half ? 2 * j : 2 * (j - half) + 1);
      const [from, to] = toLoom ? [hfRow, loomRow] : [loomRow, hfRow];
      out.set(weight.subarray(from * cols, (from + 1) * cols), to * cols);
    }
  }
  return out;
}

/** Reorders the rows of an HF q_proj/k_proj weight ([numHeads·headDim, in], row-major) into Loom's layout. */
export function hfToLoomRotary(weight: Float32Array, numHeads: number, headDim: number): Float32Array {
  return permuteRows(weight, numHeads, headDim, true);
}

/** The inverse of `hfToLoomRotary`: Loom's q/k weight rows into the rotate-half order HF checkpoints use. */
export function loomToHfRotary(weight: Float32Array, numHeads: number, headDim: number): Float32Array {
  return permuteRows(weight, numHeads, headDim, false);
}
