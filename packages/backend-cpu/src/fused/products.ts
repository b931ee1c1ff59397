import { type FusedKernels, QUANT_BLOCK, quantizedShape, sizeOf } from '@loom/tensor';
import { matmulInto, weightProduct } from '../matmul';
import { halfMatmulInto } from './half-matmul';
import type { CpuKernelContext } from './kernel-context';
import { quantizedMatmulInto } from './quantized-matmul';
import { swigluBlockInto } from './swiglu-block';
import { storedWeight } from './weight-product';

/**
 * The products against stored weights: x Wᵀ + b (the bias added by the product's own kernel), x times a
 * block-quantized or a 16-bit W (read in their packed form), and the pre-norm SwiGLU feed-forward with its
 * three products.
 */
export function productKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'linear' | 'quantizedMatmul' | 'halfMatmul' | 'swigluBlock'> {
  const k = ctx.settings;
  return {
    linear: (x, weight, bias) => {
      const [out, inner] = weight.shape;
      const rows = sizeOf(x.shape) / inner;
      const spec = weightProduct(rows, out, inner);
      return ctx.out(rows * out, (o) => matmulInto(k, spec, ctx.get(x), ctx.get(weight), o, ctx.get(bias)));
    },
    quantizedMatmul: (x, scales, quants, type) => {
      const [out, inner] = quantizedShape(type, scales.shape);
      const product = { type, rows: sizeOf(x.shape) / inner, out, blocks: inner / QUANT_BLOCK };
      const operands = [ctx.get(x), ctx.get(scales), ctx.get(quants)] as const;
      return ctx.out(product.rows * out, (o) => quantizedMatmulInto(k, product, ...operands, o));
    },
    halfMatmul: (x, packed, type) => {
      const [out, words] = packed.shape;
      const product = { type, rows: sizeOf(x.shape) / (words * 2), out, inner: words * 2 };
      return ctx.out(product.rows * out, (o) => halfMatmulInto(k, product, ctx.get(x), ctx.get(packed), o));
    },
    swigluBlock: (x, normWeight, w1, w1Scales, w3, w3Scales, w2, w2Scales, eps, formats) =>
      ctx.out(sizeOf(x.shape), (o) => {
        const operands = {
          x: ctx.get(x),
          normWeight: ctx.get(normWeight),
          w1: storedWeight(ctx, formats.w1, w1, w1Scales),
          w3: storedWeight(ctx, formats.w3, w3, w3Scales),
          w2: storedWeight(ctx, formats.w2, w2, w2Scales),
        };
        swigluBlockInto(k, ctx.precision, operands, w1.shape[0], eps, o);
      }),
  };
}
