import { CpuBackend } from '@loom/backend-cpu';
import { quantizeLinears, tensorsFromTransformer } from '@loom/models';
import { Linear, makeConfig, TransformerLM } from '@loom/nn';
import { InferenceSession, TokenChooser } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { decodeStepCounts } from '../src/suites/decode-counts';

const backend = await webgpuForTests();

/** A tiny llama with random weights: 2 layers (or `numLayers`), grouped-query heads, untied output. */
function tinyModel(numLayers = 2, vocabSize = 64): TransformerLM {
  return new TransformerLM(
    makeConfig('llama', {
      vocabSize,
      dim: 32,
      hiddenDim: 64,
      numLayers,
      numHeads: 4,
      numKvHeads: 2,
      maxSeqLen: 32,
      tiedEmbeddings: false,
    }),
  ).eval();
}

/** The logits of each decode step over `tokens`, fed one at a time through the KV cache. */
async function decodeLogits(model: TransformerLM, tokens: readonly number[]): Promise<Float32Array[]> {
  const session = new InferenceSession(model);
  const rows: Float32Array[] = [];
  for (const token of tokens) {
    const logits = session.feed([token]);
    rows.push(await logits.float32Data());
    logits.dispose();
  }
  session.dispose();
  return rows;
}

describe.skipIf(!backend)('WebGPU decode counts on a tiny model (lavapipe)', () => {
  it('after 3 warm-up tokens, tokens 4..10 create no buffers and submit one command buffer each', async () => {
    if (!backend) throw new Error('unreachable');
    setBackend(backend);
    const model = tinyModel();
    const chooser = new TokenChooser({ temperature: 0 });
    const steps = await decodeStepCounts(model, backend, chooser, 3, 7);
    expect(steps).toHaveLength(7);
    for (const step of steps) {
      expect(step.buffersCreated).toBe(0);
      expect(step.submits).toBe(1);
      expect(step.paramUploads).toBe(1);
      expect(step.pipelinesCompiled).toBe(0);
      expect(step.uploads).toBe(1); // the token id
      expect(step.bytesRead).toBe(8); // the argmax and the check sum
      expect(step.dispatches).toBe(steps[0].dispatches);
    }
    // Every weight is read at least once per token, but of the embedding table only the token's row; the cache
    // adds a little more each step. Counting the whole table the gather binds would pass the weights' size.
    const weights = model.weightBytes;
    const { vocabSize, dim } = model.config;
    expect(model.stepWeightBytes).toBe(weights - 4 * (vocabSize - 1) * dim);
    expect(steps[0].inputBytes).toBeGreaterThanOrEqual(model.stepWeightBytes);
    expect(steps[0].inputBytes).toBeLessThan(weights);
    expect(steps[6].inputBytes).toBeGreaterThan(steps[0].inputBytes);
    model.dispose();
  });

  it('a model whose products read Q8_0 blocks reads about its compact weights a token, not its released f32 ones', async () => {
    if (!backend) throw new Error('unreachable');
    setBackend(backend);
    const model = tinyModel(2, 1024);
    const f32 = model.weightBytes;
    expect(await quantizeLinears(model, 'q8_0')).toBe(2 * 7 + 1);
    for (const m of model.modules()) if (m instanceof Linear) m.releaseWeight();
    const weights = model.weightBytes;
    // Q8_0 blocks take 36 bytes for 32 values (128 in f32); the f32 embedding table and norms stay.
    const { vocabSize, dim } = model.config;
    const table = 4 * vocabSize * dim;
    expect(weights - table).toBeLessThan((f32 - table) / 3);
    const [step] = await decodeStepCounts(model, backend, new TokenChooser({ temperature: 0 }), 3, 1);
    // Every block once, of the table one row; what passes them is activations and the cache (~8 KB here), far
    // less than the table the gather binds (128 KB).
    expect(step.inputBytes).toBeGreaterThanOrEqual(model.stepWeightBytes);
    expect(step.inputBytes).toBeLessThan(model.stepWeightBytes + table / 8);
    model.dispose();
  });

  for (const weights of ['f32', 'Q8_0', 'Q4_0'] as const) {
    it(`a llama layer with ${weights} weights costs five dispatches a token: the fused attention half (3) and SwiGLU block (2)`, async () => {
      if (!backend) throw new Error('unreachable');
      setBackend(backend);
      const chooser = new TokenChooser({ temperature: 0 });
      const perStep: number[] = [];
      for (const layers of [2, 5]) {
        const model = tinyModel(layers);
        if (weights !== 'f32') await quantizeLinears(model, weights === 'Q8_0' ? 'q8_0' : 'q4_0');
        const [step] = await decodeStepCounts(model, backend, chooser, 3, 1);
        perStep.push(step.dispatches);
        model.dispose();
      }
      // The separate ops take 17 a layer (norm, three products, two RoPEs, two cache writes, attention, output
      // product, add; norm, two products, gate, product, add); the fused ones, whatever the weights' format: q/k/v
      // with norm and RoPE and the cache row, attention, output product with the residual (into an `empty` output:
      // no fill); gate, down product with the residual.
      expect((perStep[1] - perStep[0]) / 3).toBe(5);
    });
  }

  it('decodes the same logits as the CPU backend from the same weights', async () => {
    if (!backend) throw new Error('unreachable');
    const cpu = new CpuBackend();
    setBackend(cpu);
    const reference = tinyModel();
    setBackend(backend);
    const model = tinyModel();
    model.loadStateDict(new Map((await tensorsFromTransformer(reference)).map((t) => [t.name, t])));
    const tokens = [1, 7, 3, 60, 12, 12, 5, 41, 0, 33];
    const want = await decodeLogits(reference, tokens);
    const got = await decodeLogits(model, tokens);
    for (let step = 0; step < tokens.length; step++) {
      let worst = 0;
      for (let i = 0; i < want[step].length; i++) {
        worst = Math.max(worst, Math.abs(got[step][i] - want[step][i]) / (1 + Math.abs(want[step][i])));
      }
      expect(worst).toBeLessThan(1e-4);
    }
    model.dispose();
    reference.dispose();
    setBackend(cpu);
  });
});
