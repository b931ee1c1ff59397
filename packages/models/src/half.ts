/** The 16-bit float conversions live in @loom/tensor (16-bit weights are held packed there); the readers import them here. */
export { bf16ToF32, f16ToF32, f32ToBf16Bits, f32ToF16Bits } from '@loom/tensor';
