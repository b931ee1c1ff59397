// The TypeScript consumer: every package's whole public API through its published .d.ts, checked by
// `tsc --noEmit` with strict and without skipLibCheck (tsconfig.json beside this file), plus a few
// uses whose types must come out exact (no any).
import * as autograd from '@loom/autograd';
import * as cpu from '@loom/backend-cpu';
import * as webgpu from '@loom/backend-webgpu';
import * as conformance from '@loom/conformance';
import * as kvcache from '@loom/kvcache';
import * as models from '@loom/models';
import * as nn from '@loom/nn';
import * as runtime from '@loom/runtime';
import * as sampler from '@loom/sampler';
import * as tensor from '@loom/tensor';
import * as tokenizer from '@loom/tokenizer';
import * as webgpuNode from '@loom/webgpu-node';

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertType = <T extends true>(): T | undefined => undefined;

export const packages = [autograd, cpu, webgpu, conformance, kvcache, models, nn, runtime, sampler, tensor];
export const more = [tokenizer, webgpuNode];

export async function uses(device: GPUDevice): Promise<void> {
  const backend: tensor.Backend = await webgpu.WebGPUBackend.create({ device });
  tensor.setBackend(new autograd.AutodiffBackend(backend));
  const w: tensor.Tensor = tensor.tensor([1, 2, 3]);
  const { value, grads } = autograd.valueAndGrad(() => w.mul(w).sum(), [w]);
  const values = await grads[0].data();
  assertType<Exact<Awaited<ReturnType<typeof value.item>>, number>>();
  assertType<Exact<typeof values, Float32Array | Int32Array | Float64Array>>();

  const bpe: tokenizer.Tokenizer = tokenizer.trainBpe('abc abc', { vocabSize: 260 });
  const model = new nn.TransformerLM(
    nn.makeConfig('llama', { vocabSize: bpe.vocabSize, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 8 }),
  );
  const events: AsyncIterable<runtime.GenerationEvent> = new runtime.TextGenerator(model, bpe).generate('a');
  for await (const event of events) {
    if (event.type === 'done') assertType<Exact<typeof event.stats.stopReason, sampler.StopReason>>();
  }
  const cache = kvcache.KVCache.forModel(model.config);
  assertType<Exact<ReturnType<typeof cache.bytes>, number>>();
  assertType<Exact<Awaited<ReturnType<typeof webgpuNode.requireNodeWebGPU>>, webgpu.WebGPUBackend>>();
  assertType<Exact<ReturnType<typeof models.describeConfig>, string>>();
  assertType<Exact<(typeof conformance.allGroups)[number], conformance.OpGroup>>();
  assertType<Exact<InstanceType<typeof cpu.CpuBackend>['kernelSettings']['threads'], number>>();
}
