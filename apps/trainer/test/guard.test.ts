import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutodiffBackend } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { AdamW, makeConfig, TransformerLM } from '@loom/nn';
import { setBackend, tensor, writeSlice } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { decoderLoss } from '../src/arch/decoder';
import { cutBatch } from '../src/batches';
import { main } from '../src/cli';
import { trainStep } from '../src/step';
import { RUN_FILES } from '../src/train';
import { collectingIO, smallCorpus, TINY_QUIET } from './helpers';

/** A learning rate so large that the first update blows the weights up and the second loss is not finite. */
const DIVERGE = ['--lr', '1e30', '--clip', '0', '--iters', '5', '--eval-every', '0'];

/** A learning rate that makes the loss explode to finite 3e12 and 2e17 at steps 2 and 3, then NaN at step 4. */
const EXPLODE = ['--lr', '1e6', '--clip', '0', '--eval-every', '0'];

function lastLogRecord(dir: string): unknown {
  const last = readFileSync(join(dir, RUN_FILES.log), 'utf8').trim().split('\n').at(-1) ?? '';
  return JSON.parse(last);
}

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
    const outcome = await trainStep({
      loss: (b) => decoderLoss(model, b),
      params,
      optimizer,
      batches: [batch],
      lr: 0.1,
      clip: 1,
    });
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
    expect(lastLogRecord(out)).toMatchObject({ type: 'end', step: 2, reason: 'nonfinite' });
    expect(existsSync(join(out, '.lock')), 'the lock is released').toBe(false);
  });

  it('saves no checkpoint while the loss has exploded, keeping the last good one', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const { io, stderr } = collectingIO();
    const argv = [
      '--data',
      data,
      ...TINY_QUIET,
      ...EXPLODE,
      '--iters',
      '6',
      '--ckpt-every',
      '1',
      '--out',
      out,
    ];
    expect(await main(argv, io, { baseDir: dir })).toBe(1);
    for (const step of [2, 3]) {
      expect(stderr.text).toMatch(
        new RegExp(
          `step ${step}: checkpoint not saved: the training loss of step ${step} is \\d\\.\\d\\de\\+\\d+, above 10 × ln\\(51\\) = 39\\.3: the run has diverged; the last checkpoint \\(step 1\\) is in`,
        ),
      );
    }
    expect(stderr.text).toContain('train: step 4: non-finite loss NaN');
    expect(state(out)).toMatchObject({ step: 1, optimizerSteps: 1 });
  });

  it('with --on-nonfinite skip, counts the skipped steps and fails when the final evaluation is not finite', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, ...DIVERGE, '--on-nonfinite', 'skip', '--out', out];
    expect(await main(argv, io, { baseDir: dir })).toBe(1);
    expect(stderr.text).toContain('step 2: non-finite loss');
    expect(stderr.text).toContain('update skipped (4 of at most 10)');
    expect(stderr.text).toContain(
      'train: step 5: the final checkpoint was not saved: the validation loss of the evaluation at step 5 is NaN; no checkpoint was saved. Lower --lr (or --clip) and train again',
    );
    expect(existsSync(join(out, 'model.safetensors'))).toBe(false);
    expect(lastLogRecord(out)).toMatchObject({ type: 'end', step: 5, reason: 'nonfinite' });
  });

  it('fails a run that ends with a diverged evaluation, though no step was non-finite', async () => {
    const { dir, data } = smallCorpus();
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, ...EXPLODE, '--iters', '1', '--out', join(dir, 'run')];
    expect(await main(argv, io, { baseDir: dir })).toBe(1);
    expect(stderr.text).toMatch(
      /train: step 1: the final checkpoint was not saved: the validation loss of the evaluation at step 1 is \d\.\d\de\+\d+, above 10 × ln\(51\) = 39\.3: the run has diverged; no checkpoint was saved/,
    );
    expect(existsSync(join(dir, 'run', 'model.safetensors'))).toBe(false);
  });

  it('bounds the steps --on-nonfinite skip may drop with --max-skipped-steps', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const { io, stderr } = collectingIO();
    const flags = ['--on-nonfinite', 'skip', '--max-skipped-steps', '2', '--ckpt-every', '1', '--out', out];
    expect(await main(['--data', data, ...TINY_QUIET, ...DIVERGE, ...flags], io, { baseDir: dir })).toBe(1);
    expect(stderr.text).toContain('update skipped (2 of at most 2)');
    expect(stderr.text).toMatch(
      /train: step 4: non-finite loss NaN, gradient norm NaN; that makes 3 skipped updates, more than --max-skipped-steps 2, so the run stopped; the last checkpoint \(step 1\) is in .*\. Lower --lr \(or --clip\), or raise --max-skipped-steps/,
    );
    expect(state(out)).toMatchObject({ step: 1, skipped: 0 });
    expect(lastLogRecord(out)).toMatchObject({ type: 'end', step: 4, reason: 'nonfinite' });
  });
});
