import type { GpuStorage } from '../gpu-storage';
import type { BufferDecl } from './program';

/** What a product adds to each output: a residual [batch, n] (which may be the output itself) or a bias [n]. */
export interface ProductAddend {
  readonly kind: 'residual' | 'bias';
  readonly storage: GpuStorage;
}

/**
 * How a kernel adds it to an output's dot product: nothing, `res` bound as an input of the output's shape (a
 * residual stream), the output's own value (the residual is the output buffer, updated in place), or `res` bound
 * as a bias of one value a column.
 */
export type Addend = 'none' | 'input' | 'in-place' | 'bias';

/** WGSL before output o's sum (column j) for each way. */
export const ADDEND_TERM: Record<Addend, string> = {
  none: '',
  input: 'res[o] + ',
  'in-place': 'out[o] + ',
  bias: 'res[j] + ',
};

/** How a product written into `out` adds `add`, and the `res` input that reads: its declaration and storage, or none. */
export function addendOf(
  out: GpuStorage,
  add: ProductAddend | undefined,
): { readonly mode: Addend; readonly decls: BufferDecl[]; readonly storages: GpuStorage[] } {
  if (add === undefined) return { mode: 'none', decls: [], storages: [] };
  if (add.kind === 'residual' && add.storage === out) return { mode: 'in-place', decls: [], storages: [] };
  const mode = add.kind === 'bias' ? 'bias' : 'input';
  return { mode, decls: [{ name: 'res', type: 'f32' }], storages: [add.storage] };
}
