import { join } from 'node:path';
import { AutodiffBackend } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { isMambaConfig, loadAnyCheckpoint } from '@loom/models';
import { AdamW, MambaLM, makeConfig } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { ARCHITECTURES } from '../src/arch/registry';
import { parseArgs } from '../src/args';
import { loadCorpus } from '../src/corpus';
import { buildTokenizer, encodeDataset } from '../src/dataset';
import { defaultOptions } from '../src/options';
import { trainStep } from '../src/step';
import { type TrainResult, train } from '../src/train';
import { Collector, collectingIO, smallCorpus, TINY_QUIET, tempDir } from './helpers';

function given(argv: string[]) {
  const command = parseArgs(argv, '/');
  if (command.kind !== 'train') throw new Error('expected a train command');
  return command.given;
}

describe('--arch mamba', () => {
  it('builds a MambaLM whose loss on generated stories falls clearly in 40 steps, and samples from its state', async () => {
    setBackend(new AutodiffBackend(new CpuBackend()));
    const options = {
      ...defaultOptions(tempDir()),
      arch: 'mamba' as const,
      batch: 8,
      block: 32,
      evalBatches: 2,
      sampleTokens: 12,
      temperature: 0,
    };
    const corpus = loadCorpus(smallCorpus().data);
    const tokenizer = buildTokenizer(corpus, { kind: 'char', vocabSize: 512 });
    const dataset = encodeDataset(corpus, tokenizer, options.block);
    const config = makeConfig('llama', {
      vocabSize: tokenizer.vocabSize,
      dim: 32,
      numLayers: 2,
      numHeads: 2,
      maxSeqLen: options.block,
    });
    const model = ARCHITECTURES.mamba.build(config, { dataset, options });
    expect(model.module).toBeInstanceOf(MambaLM);
    const before = await model.evaluate(model.evalBatches('val'));
    const optimizer = new AdamW({ weightDecay: 0.1 });
    const params = model.module.parameters();
    for (let step = 0; step < 40; step++) {
      const outcome = await trainStep({
        loss: model.loss,
        params,
        optimizer,
        batches: model.trainBatches(step),
        lr: 1e-2,
        clip: 1,
      });
      expect(outcome.kind).toBe('updated');
    }
    const after = await model.evaluate(model.evalBatches('val'));
    expect(before.loss).toBeGreaterThan(Math.log(tokenizer.vocabSize) - 0.5);
    expect(after.loss, `val loss ${before.loss.toFixed(3)} -> ${after.loss.toFixed(3)}`).toBeLessThan(
      0.8 * before.loss,
    );
    const out = new Collector();
    const text = await model.report(out);
    expect(text?.startsWith('Once upon a time')).toBe(true);
    expect(out.text).toContain('--- sample (12 tokens, greedy) ---');
    const { body, heads } = await model.tensors();
    expect(body.map((t) => t.name)).toContain('layers.1.mixer.A_log');
    expect(heads).toEqual([]);
    optimizer.dispose();
    model.module.dispose();
  });

  it('saves a Mamba checkpoint; a resumed run gives exactly the losses of an uninterrupted one', async () => {
    const { dir, data } = smallCorpus();
    const flags = [
      ...['--data', data, '--arch', 'mamba', ...TINY_QUIET],
      ...['--iters', '4', '--eval-every', '2'],
    ];
    const whole = await train(given([...flags, '--out', join(dir, 'whole')]), dir, collectingIO().io);
    const controller = new AbortController();
    const first = await train(given([...flags, '--out', join(dir, 'parts')]), dir, collectingIO().io, {
      signal: controller.signal,
      onStep: (record) => {
        if (record.step === 2) controller.abort();
      },
    });
    expect(first.step).toBe(2);
    const rest = await train({ resume: join(dir, 'parts') }, dir, collectingIO().io);
    expect(rest.end).toBe('finished');
    const losses = (...runs: TrainResult[]) =>
      runs.flatMap((r) => r.steps.map((s) => [s.step, s.loss, s.gradNorm]));
    expect(losses(first, rest)).toEqual(losses(whole));
    expect(losses(whole)).toHaveLength(4);
    const evals = (...runs: TrainResult[]) => runs.flatMap((r) => r.evals.map((e) => [e.step, e.valLoss]));
    expect(evals(first, rest)).toEqual(evals(whole));

    const resumed = loadAnyCheckpoint(join(dir, 'parts'));
    const uninterrupted = loadAnyCheckpoint(join(dir, 'whole'));
    expect(isMambaConfig(resumed.config)).toBe(true);
    expect(resumed.config).toMatchObject({ arch: 'mamba', dim: 16, numLayers: 1 });
    expect(resumed.tensors.map((t) => t.name)).toContain('layers.0.mixer.A_log');
    expect(resumed.tensors).toEqual(uninterrupted.tensors);
  }, 60_000);
});
