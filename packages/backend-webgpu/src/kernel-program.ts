/**
 * What the pipeline cache needs to build a compute pipeline. Bindings follow one
 * convention: `inputs` read-only storage buffers at bindings 0.., then `outputs`
 * read-write storage buffers, then the uniform `Params` block when `uniform` is set.
 */
export interface KernelProgram {
  /** Identifies the shader and its specialisation (dtype, rank, op, tile size...). */
  readonly key: string;
  /** Builds the WGSL source; called once per key. */
  readonly code: () => string;
  readonly inputs: number;
  readonly outputs: number;
  readonly uniform: boolean;
}
