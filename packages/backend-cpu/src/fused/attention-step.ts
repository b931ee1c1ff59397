import type { FusedKernels } from '@loom/tensor';
import type { CpuStorage } from '../storage';
import { attentionKernel } from './attention';
import { decodeAttentionInto } from './decode-attention';
import { KeptScratch } from './kept-scratch';
import type { CpuKernelContext } from './kernel-context';
import { rmsnormInto } from './norm';
import { ropeInto } from './rope';
import { storedWeight, weightProductInto } from './weight-product';

/** The normalised rows, the queries, the new keys and values, and the heads' attention outputs. */
const scratch = new KeptScratch();

/**
 * One decode step of a llama attention block (`attentionStep`): the same kernels as the separate ops (the norm, the
 * products on the kernels of their weights' formats, threads included, RoPE in place, the decode attention), called from one place, so
 * a step crosses from the tensor front-end into the backend once for the attention half of a layer instead of
 * eleven times. The new keys and values are copied into row `offset` of the store of each batch row.
 */
export function attentionStepKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'attentionStep'> {
  return {
    attentionStep: (out, x, normWeight, ...rest) => {
      const [wq, wqScales, wk, wkScales, wv, wvScales, wo, woScales, keys, values, params] = rest;
      const settings = ctx.settings;
      const [b, , dim] = x.shape;
      const [, s, hkv, hd] = keys.shape;
      const h = wq.shape[0] / hd;
      const { formats } = params;
      const [xs, ns, ks, vs, os] = [x, normWeight, keys, values, out].map((t) => ctx.get(t));
      const qw = storedWeight(ctx, formats.wq, wq, wqScales);
      const kw = storedWeight(ctx, formats.wk, wk, wkScales);
      const vw = storedWeight(ctx, formats.wv, wv, wvScales);
      const ow = storedWeight(ctx, formats.wo, wo, woScales);
      const owned: CpuStorage[] = [];
      try {
        const n = scratch.get(0, b * dim, ctx.precision, owned);
        const q = scratch.get(1, b * h * hd, ctx.precision, owned);
        const k = scratch.get(2, b * hkv * hd, ctx.precision, owned);
        const v = scratch.get(3, b * hkv * hd, ctx.precision, owned);
        const heads = scratch.get(4, b * h * hd, ctx.precision, owned);
        rmsnormInto(settings, xs, ns, params.eps, n);
        weightProductInto(settings, qw, b, h * hd, dim, n, q);
        weightProductInto(settings, kw, b, hkv * hd, dim, n, k);
        weightProductInto(settings, vw, b, hkv * hd, dim, n, v);
        const { offset } = params.attention;
        const positions = new Array<number>(b).fill(offset);
        const { inverseFrequencies, ropeScale } = params;
        ropeInto(settings, q, [b, 1, h, hd], positions, inverseFrequencies, ropeScale, q);
        ropeInto(settings, k, [b, 1, hkv, hd], positions, inverseFrequencies, ropeScale, k);
        const row = hkv * hd;
        const [kv, vv, keyStore, valueStore] = [k.f32, v.f32, ks.f32, vs.f32];
        for (let bi = 0; bi < b; bi++) {
          keyStore.set(kv.subarray(bi * row, (bi + 1) * row), (bi * s + offset) * row);
          valueStore.set(vv.subarray(bi * row, (bi + 1) * row), (bi * s + offset) * row);
        }
        const qShape = [b, 1, h, hd];
        if (!decodeAttentionInto(settings, q, qShape, ks, vs, keys.shape, params.attention, heads)) {
          attentionKernel(q.f32, qShape, ks.f32, vs.f32, keys.shape, params.attention, heads.f32);
        }
        weightProductInto(settings, ow, b, dim, h * hd, heads, os);
        const [ov, xv] = [os.f32, xs.f32];
        for (let i = 0; i < ov.length; i++) ov[i] += xv[i];
      } finally {
        for (const storage of owned) storage.free();
      }
    },
  };
}
