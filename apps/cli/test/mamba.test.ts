import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { isMambaConfig, loadAnyCheckpoint, mambaFromTensors } from '@loom/models';
import { scope, setBackend, tensor } from '@loom/tensor';
import { tokenizerFromJSON } from '@loom/tokenizer';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loom } from './loom-io';

/** The index of the largest score (the first of equal ones), as greedy decoding picks. */
function argmax(scores: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
  return best;
}

describe('loom train --arch mamba, then loom generate', () => {
  it('generates from the trained checkpoint greedily, exactly as stepping the model by hand', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'loom-mamba-'));
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
    const lines = ['the cat sat on the mat.', 'a dog ran to the park.', 'the sun is warm today.'];
    writeFileSync(join(cwd, 'text.txt'), Array.from({ length: 200 }, (_, i) => lines[i % 3]).join('\n'));
    const trained = await loom(
      cwd,
      ...['train', '--arch', 'mamba', '--data', 'text.txt', '--out', 'run'],
      ...['--layers', '2', '--dim', '16', '--block', '16', '--batch', '4', '--iters', '3', '--warmup', '1'],
      ...['--eval-every', '0', '--eval-batches', '1', '--sample-tokens', '0'],
    );
    expect(trained.status, trained.stderr).toBe(0);

    const maxTokens = 12;
    const generated = await loom(
      cwd,
      ...['generate', '--model', 'run', '--prompt', 'the cat', '--temperature', '0'],
      ...['--max-tokens', String(maxTokens), '--json'],
    );
    expect(generated.status, generated.stderr).toBe(0);
    const result = JSON.parse(generated.stdout);
    expect(result.stopReason).toBe('max-tokens');
    expect(result.tokens).toHaveLength(maxTokens);

    setBackend(new CpuBackend());
    const checkpoint = loadAnyCheckpoint(join(cwd, 'run'));
    const { config } = checkpoint;
    if (!isMambaConfig(config)) throw new Error(`expected a Mamba checkpoint, got ${JSON.stringify(config)}`);
    expect(config).toMatchObject({ dim: 16, numLayers: 2 });
    const tokenizer = tokenizerFromJSON(checkpoint.tokenizerJson ?? '', 'tokenizer.json');
    const prompt = tokenizer.encode('the cat');
    expect(result.promptTokens).toEqual(prompt);
    const model = mambaFromTensors({ config, tensors: checkpoint.tensors });
    const state = model.newState();
    const byHand: number[] = [];
    let logits = scope(() => model.prefill(tensor(prompt, [1, prompt.length], { dtype: 'i32' }), state));
    for (let i = 0; i < maxTokens; i++) {
      const next = argmax(await logits.data());
      logits.dispose();
      byHand.push(next);
      logits = scope(() => model.step(tensor([next], [1, 1], { dtype: 'i32' }), state));
    }
    logits.dispose();
    state.dispose();
    model.dispose();
    expect(result.tokens).toEqual(byHand);
    expect(result.text).toBe(tokenizer.decode(byHand));
  }, 60_000);

  it('refuses --context for a Mamba model, and a transformer-only loader names the architecture', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'loom-mamba-'));
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
    writeFileSync(join(cwd, 'text.txt'), 'the cat sat on the mat.\n'.repeat(200));
    const trained = await loom(
      cwd,
      ...['train', '--arch', 'mamba', '--data', 'text.txt', '--out', 'run', '--iters', '1'],
      ...['--layers', '1', '--dim', '8', '--block', '8', '--batch', '2', '--warmup', '1'],
      ...['--eval-every', '0', '--eval-batches', '1', '--sample-tokens', '0'],
    );
    expect(trained.status, trained.stderr).toBe(0);
    const context = await loom(cwd, 'generate', '--model', 'run', '--prompt', 'the', '--context', '32');
    expect(context.status).toBe(2);
    expect(context.stderr).toMatch(/--context: run is a Mamba model, whose state has a fixed size/);
    const perplexity = await loom(cwd, 'perplexity', '--model', 'run', 'text.txt');
    expect(perplexity.status).not.toBe(0);
    expect(perplexity.stderr).toMatch(/key "arch" is "mamba": not a transformer/);
  }, 60_000);
});
