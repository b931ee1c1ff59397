// The CommonJS consumer: require() of every package (the ES module build through the `default`
// condition; Node 20.19+ loads ES modules from require), then the same greedy story.
const assert = require('node:assert/strict');

const loom = {
  autograd: require('@loom/autograd'),
  cpu: require('@loom/backend-cpu'),
  webgpu: require('@loom/backend-webgpu'),
  conformance: require('@loom/conformance'),
  kvcache: require('@loom/kvcache'),
  models: require('@loom/models'),
  nn: require('@loom/nn'),
  runtime: require('@loom/runtime'),
  sampler: require('@loom/sampler'),
  tensor: require('@loom/tensor'),
  tokenizer: require('@loom/tokenizer'),
  webgpuNode: require('@loom/webgpu-node'),
};
const entryPoints = {
  '@loom/autograd valueAndGrad': loom.autograd.valueAndGrad,
  '@loom/backend-cpu CpuBackend': loom.cpu.CpuBackend,
  '@loom/backend-webgpu WebGPUBackend': loom.webgpu.WebGPUBackend,
  '@loom/conformance runCase': loom.conformance.runCase,
  '@loom/kvcache KVCache': loom.kvcache.KVCache,
  '@loom/models loadModelFile': loom.models.loadModelFile,
  '@loom/nn TransformerLM': loom.nn.TransformerLM,
  '@loom/runtime TextGenerator': loom.runtime.TextGenerator,
  '@loom/sampler Sampler': loom.sampler.Sampler,
  '@loom/tensor tensor': loom.tensor.tensor,
  '@loom/tokenizer trainBpe': loom.tokenizer.trainBpe,
  '@loom/webgpu-node requireNodeWebGPU': loom.webgpuNode.requireNodeWebGPU,
};
for (const [name, value] of Object.entries(entryPoints)) {
  assert.equal(typeof value, 'function', `require: ${name} is not a function`);
}

require('./story.mjs')
  .greedyStory(loom)
  .then((story) => console.log(`RESULT ${JSON.stringify(story)}`))
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
