import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutodiffBackend } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { AdamW, makeConfig, TransformerLM } from '@loom/nn';
import { setBackend, tensor, writeSlice } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { cutBatch } from '../src/batches';
import { main } from '../src/cli';
import { trainStep } from '../src/step';
import { RUN_FILES } from '../src/train';
import { collectingIO, smallCorpus, TINY_QUIET } from './helpers';

/** A learning rate so large that the first update blows the weights up and the second loss is not finite. */
const DIVERGE = ['--lr', '1e30', '--clip', '0', '--iters', '5', '--eval-every', '0'];

function state(dir: string): { step: number; skipped: number; optimizerSteps: number } {
  return JSON.parse(readFileSync(join(dir, 'trainer-state.json'), 'utf8'));
}

describe('non-finite guard', () => {
  it('never applies an update whose loss or gradient is not finite', async () => {
    setBackend(new AutodiffBackend(new CpuBackend()));
    const config = makeConfig('gpt2', { vocabSize: 5, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 4 });
    const model = new TransformerLM(config, { seed: 1 });
    const params = model.parameters();
    const [embedding] = params;
    const nan = tensor([Number.NaN], [1, 1]);
    writeSlice(embedding, nan, [2, 3]);
    nan.dispose();
    const before = await Promise.all(params.map((p) => p.array()));
    const optimizer = new AdamW();
    const batch = cutBatch(Int32Array.from([0, 1, 2, 3, 4, 0, 1]), [0, 2], 4);
    const outcome = await trainStep({ model, params, optimizer, batches: [batch], lr: 0.1, clip: 1 });
    expect(outcome.kind).toBe('nonfinite');
    expect(Number.isNaN(outcome.loss)).toBe(true);
    expect(await Promise.all(params.map((p) => p.array()))).toEqual(before);
    expect(optimizer.stepCount).toBe(0);
    expect(optimizer.state().size).toBe(0);
    model.dispose();
  });

  it('stops the run by default, keeping the last good checkpoint', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, ...DIVERGE, '--ckpt-every', '1', '--out', out];
    expect(await main(argv, io, { baseDir: dir })).toBe(1);
    expect(stderr.text).toMatch(
      /train: step 2: non-finite loss (NaN|Infinity), gradient norm \S+\. The update was not applied and the run stopped; the last checkpoint \(step 1\) is in/,
    );
    expect(stderr.text).toContain('--on-nonfinite skip');
    expect(state(out)).toMatchObject({ step: 1, optimizerSteps: 1 });
    const last = readFileSync(join(out, RUN_FILES.log), 'utf8').trim().split('\n').at(-1) ?? '';
    expect(JSON.parse(last)).toMatchObject({ type: 'end', step: 2, reason: 'nonfinite' });
  });

  it('skips such steps with --on-nonfinite skip', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, ...DIVERGE, '--on-nonfinite', 'skip', '--out', out];
    expect(await main(argv, io, { baseDir: dir }), stderr.text).toBe(0);
    expect(stderr.text).toContain('step 2: non-finite loss');
    expect(stderr.text).toContain('update skipped (4 so far)');
    expect(state(out)).toMatchObject({ step: 5, skipped: 4, optimizerSteps: 1 });
  });
});
