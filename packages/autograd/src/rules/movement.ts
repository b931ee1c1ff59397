import { permute, type TensorInfo, writeSlice, zeros } from '@loom/tensor';
import type { BackwardFn } from '../tape';

export function permuteRule(perm: readonly number[]): BackwardFn {
  const inverse = new Array<number>(perm.length);
  perm.forEach((p, i) => {
    inverse[p] = i;
  });
  return (g) => [permute(g, inverse)];
}

/** The gradient of a slice is zero outside the box and the incoming gradient inside it. */
export function sliceRule(x: TensorInfo, starts: readonly number[]): BackwardFn {
  return (g) => {
    const dx = zeros(x.shape, { backend: g.backend });
    writeSlice(dx, g, starts);
    return [dx];
  };
}

/** writeSlice(dst, src, starts): src receives the gradient of the box it was written to. */
export function writeSliceRule(src: TensorInfo, starts: readonly number[]): BackwardFn {
  return (g) => [g.slice(starts, src.shape)];
}
