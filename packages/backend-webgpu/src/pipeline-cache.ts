import type { GpuCounters } from './gpu-counters';
import { ShaderStage } from './gpu-flags';
import type { KernelProgram } from './kernel-program';

export interface CachedPipeline {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroupLayout: GPUBindGroupLayout;
}

/**
 * Compute pipelines keyed by the WGSL they compile (and their binding shape), so that two different shaders can
 * never share a pipeline through a key that forgot a specialisation; `program.key` only labels them.
 */
export class PipelineCache {
  readonly #device: GPUDevice;
  readonly #counters: GpuCounters | undefined;
  readonly #pipelines = new Map<string, CachedPipeline>();
  readonly #layouts = new Map<string, { bindGroup: GPUBindGroupLayout; pipeline: GPUPipelineLayout }>();

  /** `counters`, when given, counts each pipeline compiled. */
  constructor(device: GPUDevice, counters?: GpuCounters) {
    this.#device = device;
    this.#counters = counters;
  }

  get size(): number {
    return this.#pipelines.size;
  }

  get(program: KernelProgram): CachedPipeline {
    const code = program.code();
    const key = `${program.inputs}/${program.outputs}/${program.uniform}\n${code}`;
    const hit = this.#pipelines.get(key);
    if (hit) return hit;
    const layout = this.#layout(program);
    const module = this.#device.createShaderModule({ label: program.key, code });
    const pipeline = this.#device.createComputePipeline({
      label: program.key,
      layout: layout.pipeline,
      compute: { module, entryPoint: 'main' },
    });
    if (this.#counters) this.#counters.pipelinesCompiled++;
    const cached = { pipeline, bindGroupLayout: layout.bindGroup };
    this.#pipelines.set(key, cached);
    return cached;
  }

  #layout(program: KernelProgram): { bindGroup: GPUBindGroupLayout; pipeline: GPUPipelineLayout } {
    const key = `${program.inputs}/${program.outputs}/${program.uniform}`;
    const hit = this.#layouts.get(key);
    if (hit) return hit;
    const entries: GPUBindGroupLayoutEntry[] = [];
    const compute = ShaderStage.COMPUTE;
    for (let i = 0; i < program.inputs; i++) {
      entries.push({ binding: entries.length, visibility: compute, buffer: { type: 'read-only-storage' } });
    }
    for (let i = 0; i < program.outputs; i++) {
      entries.push({ binding: entries.length, visibility: compute, buffer: { type: 'storage' } });
    }
    if (program.uniform)
      entries.push({ binding: entries.length, visibility: compute, buffer: { type: 'uniform' } });
    const bindGroup = this.#device.createBindGroupLayout({ label: key, entries });
    const layout = {
      bindGroup,
      pipeline: this.#device.createPipelineLayout({ bindGroupLayouts: [bindGroup] }),
    };
    this.#layouts.set(key, layout);
    return layout;
  }
}
