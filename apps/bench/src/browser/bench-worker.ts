/// <reference lib="webworker" />
import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import { parseModel, transformerFromTensors } from '@loom/models';
import type { TransformerLM } from '@loom/nn';
import { type Backend, setBackend } from '@loom/tensor';
import { computeCheck, decodeRate, shapedModel } from './bench-model';
import type { BenchModel, BenchReply, BenchRequest } from './protocol';

/**
 * The page's model worker: a dedicated Web Worker (where the CPU backend's pool may block), answering one
 * request at a time. Models are built once per name and backend, then reused.
 */
declare const self: DedicatedWorkerGlobalScope;

let backend: Backend | undefined;
const models = new Map<string, TransformerLM>();

async function setUp(kind: 'cpu' | 'webgpu', threads: number): Promise<BenchReply> {
  for (const model of models.values()) model.dispose();
  models.clear();
  if (kind === 'webgpu') {
    const gpu = await WebGPUBackend.create();
    const { vendor, architecture, description } = gpu.device.adapterInfo;
    backend = gpu;
    setBackend(gpu);
    return {
      kind: 'setup',
      threads: 1,
      adapter: [vendor, architecture, description].filter(Boolean).join(' / '),
    };
  }
  const cpu = new CpuBackend({ threads });
  backend = cpu;
  setBackend(cpu);
  return { kind: 'setup', threads: await cpu.threadsReady(), adapter: 'cpu' };
}

async function modelFor(model: BenchModel): Promise<TransformerLM> {
  const cached = models.get(model.name);
  if (cached) return cached;
  let built: TransformerLM;
  if (model.kind === 'shape') built = shapedModel(model.name);
  else {
    const response = await fetch(model.url);
    if (!response.ok) throw new Error(`${model.url}: the server answered ${response.status}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    built = transformerFromTensors(parseModel(bytes, undefined, model.name), model.name).eval();
  }
  models.set(model.name, built);
  return built;
}

async function answer(request: BenchRequest): Promise<BenchReply> {
  if (request.kind === 'setup') return setUp(request.backend, request.threads);
  if (!backend) throw new Error('the bench worker has no backend yet: send a setup request first');
  const model = await modelFor(request.model);
  if (request.kind === 'decode') {
    const { tokensPerS, tokens } = await decodeRate(model, request.steps, request.warmUp);
    return { kind: 'decode', tokensPerS, tokens };
  }
  return { kind: 'compute', ...(await computeCheck(backend, model, request.steps)) };
}

self.onmessage = (event: MessageEvent<BenchRequest>) => {
  answer(event.data).then(
    (reply) => self.postMessage(reply),
    (error: unknown) =>
      self.postMessage({ kind: 'error', message: error instanceof Error ? error.message : String(error) }),
  );
};
