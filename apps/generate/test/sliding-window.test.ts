import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import {
  expectedTensors,
  loadModelFile,
  type ModelConfig,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
  writeSafetensorsFile,
} from '@loom/models';
import { scope, setBackend, tensor } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './run-cli';

const tokenizer = '../shared/data/models/tok512.bin';
const WINDOW = 6;

/** A tiny llama for tok512; its config.json is written as Mistral's, with a sliding window. */
const config: ModelConfig = {
  preset: 'llama',
  vocabSize: 512,
  dim: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 64,
  maxSeqLen: 128,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: false,
  bias: false,
};

/** Greedy tokens by a full forward pass over the whole sequence at every step, without a cache. */
async function recomputedGreedy(dir: string, prompt: readonly number[], steps: number): Promise<number[]> {
  setBackend(new CpuBackend());
  const model = transformerFromTensors(loadModelFile(dir));
  expect(model.config.slidingWindow).toBe(WINDOW);
  const tokens = [...prompt];
  for (let i = 0; i < steps; i++) {
    const best = scope(() =>
      model
        .forward(tensor(Int32Array.from(tokens), [1, tokens.length])) // [1, T, vocab]
        .slice([0, tokens.length - 1, 0], [1, 1, config.vocabSize])
        .argmax(-1),
    );
    tokens.push((await best.data())[0]);
    best.dispose();
  }
  model.dispose();
  return tokens.slice(prompt.length);
}

describe('pnpm generate on a Mistral-style directory (sliding_window in config.json)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'loom-mistral-'));
    const tensors = expectedTensors(config).map(({ name, shape }) => ({
      name,
      shape,
      data: Float32Array.from(
        { length: shape.reduce((a, b) => a * b, 1) },
        (_, i) => 0.3 * Math.sin(0.7 * i),
      ),
    }));
    const hf = {
      ...toHfConfig(config),
      architectures: ['MistralForCausalLM'],
      model_type: 'mistral',
      sliding_window: WINDOW,
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(hf));
    writeSafetensorsFile(join(dir, 'model.safetensors'), toHfTensors(config, tensors));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('generates past the window the tokens full recomputation with the window mask gives', async () => {
    const steps = 4 * WINDOW;
    const { status, stdout, stderr } = await cli(
      ...['--model', dir, '--tokenizer', tokenizer, '--prompt', 'Once upon a time'],
      ...['--temperature', '0', '--max-tokens', String(steps), '--json'],
    );
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.tokens.length).toBe(steps);
    expect(result.tokens).toEqual(await recomputedGreedy(dir, result.promptTokens, steps));
  });
});
