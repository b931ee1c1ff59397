import type { DType } from '@loom/tensor';
import type { KernelProgram } from '../kernel-program';

/** A storage buffer a kernel declares: `array<type>` bound as `name`. */
export interface BufferDecl {
  readonly name: string;
  readonly type: string;
}

/** WGSL scalar type of a dtype. */
export function wgslType(dtype: DType): 'f32' | 'i32' {
  return dtype;
}

/**
 * A kernel program whose WGSL starts with the binding declarations in the pipeline
 * cache's order (inputs, outputs, `p: Params`), followed by `body()`.
 */
export function makeProgram(
  key: string,
  inputs: readonly BufferDecl[],
  outputs: readonly BufferDecl[],
  params: { wgsl(): string } | undefined,
  body: () => string,
): KernelProgram {
  const code = (): string => {
    const lines: string[] = [];
    let binding = 0;
    for (const b of inputs)
      lines.push(`@group(0) @binding(${binding++}) var<storage, read> ${b.name}: array<${b.type}>;`);
    for (const b of outputs) {
      lines.push(`@group(0) @binding(${binding++}) var<storage, read_write> ${b.name}: array<${b.type}>;`);
    }
    if (params) lines.push(params.wgsl(), `@group(0) @binding(${binding}) var<uniform> p: Params;`);
    return `${lines.join('\n')}\n${body()}`;
  };
  return { key, code, inputs: inputs.length, outputs: outputs.length, uniform: params !== undefined };
}

/** Entry point header of a kernel with `size` threads per workgroup; `gid` is the flat workgroup index. */
export function entryPoint(size: number): string {
  return `@compute @workgroup_size(${size})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let gid = wid.y * nwg.x + wid.x;`;
}
