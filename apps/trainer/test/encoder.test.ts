import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args';
import { main } from '../src/cli';
import { type TrainResult, train } from '../src/train';
import { collectingIO, smallCorpus, TINY_QUIET, tempDir } from './helpers';

function given(argv: string[]) {
  const command = parseArgs(argv, '/');
  if (command.kind !== 'train') throw new Error('expected a train command');
  return command.given;
}

/** The shared TinyShakespeare, beside the checkout (see /work/shared/data/README.md). */
const SHAKESPEARE = resolve(__dirname, '../../../../shared/data/tinyshakespeare.txt');

/**
 * Accuracy of always guessing the most common character of the training split (the first 90% of the text) on
 * the validation characters: what a masked-token model gets without reading any context. Computed here on
 * the raw text, apart from the trainer's own code.
 */
function frequencyBaseline(text: string): { char: string; accuracy: number } {
  const chars = [...text];
  const cut = Math.floor(chars.length * 0.9);
  const counts = new Map<string, number>();
  for (const c of chars.slice(0, cut)) counts.set(c, (counts.get(c) ?? 0) + 1);
  const [char] = [...counts].reduce((best, entry) => (entry[1] > best[1] ? entry : best));
  const val = chars.slice(cut);
  return { char, accuracy: val.filter((c) => c === char).length / val.length };
}

describe('pnpm train --arch encoder', () => {
  it('--objective mlm on TinyShakespeare: masked-token accuracy well above the frequency baseline', async () => {
    expect(
      existsSync(SHAKESPEARE),
      `${SHAKESPEARE} is missing: this test trains on the shared TinyShakespeare`,
    ).toBe(true);
    const baseline = frequencyBaseline(readFileSync(SHAKESPEARE, 'utf8'));
    const { io, stdout } = collectingIO();
    const result = await train(
      given([
        '--arch',
        'encoder',
        '--objective',
        'mlm',
        '--preset',
        'llama',
        '--data',
        SHAKESPEARE,
        ...['--layers', '2', '--heads', '4', '--dim', '64', '--block', '64', '--batch', '16'],
        ...['--iters', '150', '--lr', '3e-3', '--min-lr', '3e-4', '--warmup', '20', '--eval-batches', '4'],
        ...['--eval-every', '0', '--out', join(tempDir(), 'mlm')],
      ]),
      '/',
      io,
    );
    const accuracy = result.evals.at(-1)?.valAccuracy ?? Number.NaN;
    console.log(
      `masked-token accuracy ${accuracy.toFixed(4)} after 150 steps; frequency baseline (always ${JSON.stringify(baseline.char)}) ${baseline.accuracy.toFixed(4)}; chance 1/65`,
    );
    expect(baseline.char).toBe(' ');
    expect(stdout.text).toContain(
      `frequency baseline (always " ", the most common training token) ${baseline.accuracy.toFixed(4)}`,
    );
    expect(accuracy).toBeGreaterThan(1.5 * baseline.accuracy);
  }, 120_000);

  it('--objective classify learns the generated "more a than b?" task to > 95% held-out accuracy', async () => {
    const { io, stdout } = collectingIO();
    const result = await train(
      given([
        ...['--arch', 'encoder', '--objective', 'classify'],
        ...['--layers', '2', '--heads', '4', '--dim', '32', '--block', '16', '--batch', '32'],
        ...['--iters', '120', '--lr', '3e-3', '--min-lr', '3e-4', '--warmup', '10', '--eval-batches', '8'],
        ...['--eval-every', '0', '--out', join(tempDir(), 'classify')],
      ]),
      '/',
      io,
    );
    const last = result.evals.at(-1);
    console.log(`held-out accuracy ${last?.valAccuracy} (train ${last?.trainAccuracy}) on 256 strings`);
    expect(result.evals[0].valAccuracy).toBeLessThan(0.8);
    expect(last?.valAccuracy).toBeGreaterThan(0.95);
    expect(stdout.text).toMatch(
      /classification accuracy on held-out strings \("more a than b\?"\) 0?\.9[5-9]|1\.0000/,
    );
  }, 120_000);

  for (const objective of ['mlm', 'classify'] as const) {
    it(`--objective ${objective}: a resumed run gives exactly the losses of an uninterrupted one`, async () => {
      const { dir, data } = smallCorpus();
      const flags = [
        ...['--data', data, '--arch', 'encoder', '--objective', objective, ...TINY_QUIET],
        ...['--iters', '4', '--eval-every', '2', '--dropout', '0.1'],
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
      const evals = (...runs: TrainResult[]) =>
        runs.flatMap((r) => r.evals.map((e) => [e.step, e.valLoss, e.valAccuracy]));
      expect(evals(first, rest)).toEqual(evals(whole));
    }, 60_000);
  }

  it('refuses an objective the architecture does not train, and a classify task the tokenizer cannot write', async () => {
    const { io, stderr } = collectingIO();
    expect(await main(['--arch', 'decoder', '--objective', 'mlm'], io, { baseDir: tempDir() })).not.toBe(0);
    expect(stderr.text).toContain('--objective mlm: --arch decoder trains clm');
    const { dir } = smallCorpus();
    const digits = join(dir, 'digits.txt');
    writeFileSync(digits, '0123456789\n'.repeat(300));
    await expect(
      train(
        given(['--data', digits, '--arch', 'encoder', '--objective', 'classify', ...TINY_QUIET]),
        dir,
        collectingIO().io,
      ),
    ).rejects.toThrow(
      /--objective classify: the task writes strings of a, b, c, but the tokenizer cannot encode "a"/,
    );
  });
});
