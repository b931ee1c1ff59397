import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args';
import { main } from '../src/cli';
import { RUN_FILES, type TrainResult, train } from '../src/train';
import { collectingIO, smallCorpus, TINY, TINY_QUIET, tempDir } from './helpers';

function given(argv: string[]) {
  const command = parseArgs(argv, '/');
  if (command.kind !== 'train') throw new Error('expected a train command');
  return command.given;
}

function logRecords(dir: string): { type: string; step: number }[] {
  return readFileSync(join(dir, RUN_FILES.log), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('pnpm train', () => {
  it('trains end to end: checkpoint, log, loss curve and a sample', async () => {
    const { dir, data } = smallCorpus();
    const { io, stdout, stderr } = collectingIO();
    const argv = [
      '--data',
      'stories.txt',
      ...TINY,
      '--eval-batches',
      '2',
      '--iters',
      '6',
      '--eval-every',
      '3',
      '--out',
      'run',
    ];
    const status = await main([...argv, '--sample-tokens', '24', '--temperature', '0'], io, { baseDir: dir });
    expect(status, stderr.text).toBe(0);
    const out = join(dir, 'run');
    for (const file of [
      'model.safetensors',
      'config.json',
      'tokenizer.json',
      'trainer-state.json',
      'trainer-state.safetensors',
      RUN_FILES.log,
      RUN_FILES.lossCurve,
    ]) {
      expect(existsSync(join(out, file)), file).toBe(true);
    }
    expect(stderr.text).toContain(`data:  ${data}`);
    expect(stderr.text).toMatch(/step 6: train loss \d\.\d{4}, val loss \d\.\d{4}/);
    expect(stdout.text).toMatch(/^--- sample \(24 tokens, greedy\) ---\n\n[\s\S]{24}\n---\n$/);
    const records = logRecords(out);
    expect(records.filter((r) => r.type === 'step').map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(records.filter((r) => r.type === 'eval').map((r) => r.step)).toEqual([0, 3, 6]);
    expect(records.at(-1)).toMatchObject({ type: 'end', step: 6, reason: 'finished' });
    const svg = readFileSync(join(out, RUN_FILES.lossCurve), 'utf8');
    expect(svg).toContain('<svg');
    expect(svg.match(/<circle/g)).toHaveLength(6);
  });

  it('with no --data, trains on the generated stories and samples from "Once upon a time"', async () => {
    const dir = tempDir();
    const { io, stdout, stderr } = collectingIO();
    const argv = [...TINY, '--iters', '1', '--eval-batches', '1', '--sample-tokens', '5'];
    expect(await main(argv, io, { baseDir: dir }), stderr.text).toBe(0);
    expect(stderr.text).toContain('data:  generated stories');
    expect(stdout.text).toMatch(/\) ---\nOnce upon a time/);
    expect(existsSync(join(dir, 'out', 'latest', 'model.safetensors'))).toBe(true);
  });

  it('trains a llama with grouped-query attention on a BPE tokenizer', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'bpe');
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, '--iters', '2', '--eval-every', '0', '--out', out];
    const flags = [
      ...argv,
      '--tokenizer',
      'bpe',
      '--vocab-size',
      '300',
      '--preset',
      'llama',
      '--kv-heads',
      '1',
    ];
    expect(await main(flags, io, { baseDir: dir }), stderr.text).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'tokenizer.json'), 'utf8')).kind).toBe('bpe');
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))).toMatchObject({
      preset: 'llama',
      vocabSize: 300,
      numKvHeads: 1,
    });
  });

  it('explains bad flags and unreadable data', async () => {
    const dir = tempDir();
    const bad = collectingIO();
    expect(await main(['--dim', '-3'], bad.io, { baseDir: dir })).toBe(2);
    expect(bad.stderr.text).toContain('--dim: expected an integer >= 1, got -3');
    const missing = collectingIO();
    expect(await main(['--data', 'nope.txt'], missing.io, { baseDir: dir })).toBe(1);
    expect(missing.stderr.text).toContain(`--data ${join(dir, 'nope.txt')}: cannot read it (ENOENT)`);
    const help = collectingIO();
    expect(await main(['--help'], help.io, { baseDir: dir })).toBe(0);
    expect(help.stdout.text).toContain('--on-nonfinite stop|skip');
  });
});

describe('resume', () => {
  it('gives exactly the losses of an uninterrupted run', async () => {
    const { dir, data } = smallCorpus();
    const flags = [
      '--data',
      data,
      ...TINY_QUIET,
      '--iters',
      '6',
      '--eval-every',
      '3',
      '--dropout',
      '0.1',
      '--grad-accum',
      '2',
    ];
    const whole = await train(given([...flags, '--out', join(dir, 'whole')]), dir, collectingIO().io);

    const controller = new AbortController();
    const first = await train(given([...flags, '--out', join(dir, 'parts')]), dir, collectingIO().io, {
      signal: controller.signal,
      onStep: (record) => {
        if (record.step === 3) controller.abort();
      },
    });
    expect(first.end).toBe('interrupted');
    expect(first.step).toBe(3);
    const rest = await train({ resume: join(dir, 'parts') }, dir, collectingIO().io);
    expect(rest.end).toBe('finished');

    const losses = (...runs: TrainResult[]) =>
      runs.flatMap((r) => r.steps.map((s) => [s.step, s.loss, s.gradNorm]));
    expect(losses(first, rest)).toEqual(losses(whole));
    const evals = (...runs: TrainResult[]) =>
      runs.flatMap((r) => r.evals.map((e) => [e.step, e.trainLoss, e.valLoss]));
    expect(evals(first, rest)).toEqual(evals(whole));
    const steps = logRecords(join(dir, 'parts')).filter((r) => r.type === 'step');
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('refuses a truncated or corrupted checkpoint with a clear message', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    await train(given(['--data', data, ...TINY_QUIET, '--iters', '1', '--out', out]), dir, collectingIO().io);
    const resume = () => train({ resume: out }, dir, collectingIO().io);

    const model = join(out, 'model.safetensors');
    const bytes = readFileSync(model);
    truncateSync(model, 100);
    await expect(resume()).rejects.toThrow(
      /--resume .*: cannot resume: .*model\.safetensors: expected .* but the file holds 100 .* corrupt or truncated/,
    );
    writeFileSync(model, bytes);

    const state = join(out, 'trainer-state.json');
    writeFileSync(state, readFileSync(state, 'utf8').replace('"step": 1', '"step": 7'));
    await expect(resume()).rejects.toThrow(/trainer-state\.json: expected SHA-256 .* corrupt or truncated/);

    await expect(train({ resume: join(dir, 'elsewhere') }, dir, collectingIO().io)).rejects.toThrow(
      /--resume .*elsewhere: cannot resume: no such directory/,
    );
  });

  it('refuses different data or a different model', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    await train(given(['--data', data, ...TINY_QUIET, '--iters', '1', '--out', out]), dir, collectingIO().io);
    await expect(train({ resume: out, dim: 32 }, dir, collectingIO().io)).rejects.toThrow(
      /--dim 32 \(the checkpoint has 16\)/,
    );
    writeFileSync(data, 'other text '.repeat(1000));
    await expect(train({ resume: out }, dir, collectingIO().io)).rejects.toThrow(/resume with the same text/);
  });
});
