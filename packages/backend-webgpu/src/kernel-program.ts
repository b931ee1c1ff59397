/**
 * What the pipeline cache needs to build a compute pipeline. Bindings follow one
 * convention: `inputs` read-only storage buffers at bindings 0.., then `outputs`
 * read-write storage buffers, then the uniform `Params` block when `uniform` is set.
 */
export interface KernelProgram {
  /** Names the shader and its specialisation in labels and errors (the cache keys pipelines by their code). */
  readonly key: string;
  /** Builds the WGSL source; called at each dispatch, so it must be cheap and pure. */
  readonly code: () => string;
  readonly inputs: number;
  readonly outputs: number;
  readonly uniform: boolean;
}
