import { describe, expect, it } from 'vitest';
import { mergeResumed, optionsToArgs, parseArgs, UsageError } from '../src/args';
import { defaultOptions, OptionsError, type TrainOptions, validateOptions } from '../src/options';
import { resolveOptions } from '../src/resolve';

function given(argv: string[]) {
  const command = parseArgs(argv, '/base');
  if (command.kind !== 'train') throw new Error('expected a train command');
  return command.given;
}

describe('parseArgs', () => {
  it('reads every kind of flag, in both spellings, resolving paths against the base directory', () => {
    expect(
      given([
        '--data',
        'corpus.txt',
        '--preset=llama',
        '--layers',
        '4',
        '--kv-heads',
        '2',
        '--lr',
        '1e-3',
        '--beta2',
        '0.99',
        '--out',
        '/abs/run',
        '--on-nonfinite',
        'skip',
        '--max-skipped-steps',
        '3',
        '--prompt',
        'ROMEO:',
      ]),
    ).toEqual({
      data: '/base/corpus.txt',
      preset: 'llama',
      layers: 4,
      kvHeads: 2,
      lr: 0.001,
      beta2: 0.99,
      out: '/abs/run',
      onNonfinite: 'skip',
      maxSkippedSteps: 3,
      prompt: 'ROMEO:',
    });
    expect(given(['-s', '7', '--iters=3', '--lr=0.5'])).toEqual({ seed: 7, iters: 3, lr: 0.5 });
    expect(parseArgs(['--help'], '/').kind).toBe('help');
    expect(parseArgs(['-h'], '/').kind).toBe('help');
    expect(parseArgs(['--', '-h'], '/').kind).toBe('help');
  });

  it('refuses bad input with a message naming the flag', () => {
    const cases: [string[], RegExp][] = [
      [['--layres', '4'], /unknown flag --layres/],
      [['--layers'], /--layers: expected a value/],
      [['--layers', '2.5'], /--layers: expected an integer >= 1, got 2.5/],
      [['--layers', '0'], /--layers: expected an integer >= 1/],
      [['--lr', 'fast'], /--lr: expected a number, got "fast"/],
      [['--lr', '0'], /--lr: expected a number > 0/],
      [['--lr', ''], /--lr: expected a number/],
      [['--beta2', '1'], /--beta2: expected a number in \[0, 1\)/],
      [['--dropout', '-0.1'], /--dropout: expected a number in \[0, 1\)/],
      [['--backend', 'tpu'], /--backend: expected one of cpu, webgpu, got tpu/],
      [['--seed', String(2 ** 32)], /--seed: expected an integer in 0..4294967295/],
      [['--dim', '64', '--dim', '32'], /--dim is given twice/],
      [['data.txt'], /unexpected argument "data.txt"/],
      [['--prompt', ''], /--prompt: expected some text/],
      [['--max-skipped-steps', '-1'], /--max-skipped-steps: expected an integer >= 0, got -1/],
      [['-s'], /--seed: expected a value \(N\)/],
      [['-x', '1'], /unknown flag -x/],
      [['-s', '1', '--seed=2'], /--seed is given twice/],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseArgs(argv, '/'), argv.join(' ')).toThrow(UsageError);
      expect(() => parseArgs(argv, '/'), argv.join(' ')).toThrow(message);
    }
  });

  it('writes options back as flags that parse to the same options', () => {
    const full: TrainOptions = {
      ...defaultOptions('/runs/a'),
      data: '/data/shakespeare.txt',
      tokenizer: 'bpe',
      vocabSize: 300,
      preset: 'llama',
      kvHeads: 2,
      lr: 0.1 + 0.2,
      minLr: 1e-7,
      resume: '/runs/b',
      prompt: 'First Citizen:\n',
    };
    expect({ ...defaultOptions('/x'), ...given(optionsToArgs(full)) }).toEqual(full);
  });
});

describe('options', () => {
  it('fills defaults and lets --kv-heads follow --heads', () => {
    const o = resolveOptions({ heads: 8, dim: 128 }, '/work');
    expect(o.out).toBe('/work/out/latest');
    expect(o.kvHeads).toBe(8);
    expect(o.preset).toBe('gpt2');
  });

  it('lists every problem that involves several options', () => {
    const bad = { ...defaultOptions('/o'), dim: 50, heads: 4, kvHeads: 3, minLr: 1, lr: 0.1 };
    expect(() => validateOptions(bad)).toThrow(OptionsError);
    expect(() => validateOptions(bad)).toThrow(/--dim 50 must be a multiple of --heads 4/);
    expect(() => validateOptions(bad)).toThrow(/--kv-heads 3 must divide --heads 4/);
    expect(() => validateOptions(bad)).toThrow(/--min-lr 1 must not exceed --lr 0.1/);
    expect(() => resolveOptions({ kvHeads: 2 }, '/')).toThrow(/gpt2 has no grouped-query attention/);
    expect(() => resolveOptions({ preset: 'llama', dim: 12, heads: 4 }, '/')).toThrow(/even head size/);
  });

  it('lets a resumed run change how it runs but not what it learns', () => {
    const saved = defaultOptions('/runs/a');
    expect(mergeResumed(saved, { iters: 900, backend: 'webgpu' })).toMatchObject({
      iters: 900,
      backend: 'webgpu',
    });
    expect(mergeResumed(saved, { dim: saved.dim })).toEqual(saved);
    expect(() => mergeResumed({ ...saved, dim: 64, lr: 0.01 }, { dim: 128, lr: 1 })).toThrow(
      /--dim 128 \(the checkpoint has 64\), --lr 1 \(the checkpoint has 0.01\)/,
    );
  });
});
