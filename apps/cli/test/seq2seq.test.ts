import { describe, expect, it } from 'vitest';
import { parseSeq2SeqArgs } from '../src/seq2seq/args';
import { loom } from './loom-io';

describe('loom seq2seq', () => {
  it('trains an encoder–decoder and reports loss, exact-match and examples', async () => {
    const result = await loom(
      process.cwd(),
      'seq2seq',
      // 120 steps: at 100, a change in the last bits of the clip's factor moved the held-out score between 13 and
      // 30 of 40 (a short run is chaotic); at 120 it stayed within 28-31 of 40 for seven such changes.
      ...['--task', 'sort', '--alphabet', '3', '--min-length', '2', '--max-length', '4', '--steps', '120'],
      ...[
        '--batch',
        '32',
        '--dim',
        '32',
        '--layers',
        '1',
        '--held-out',
        '40',
        '--examples',
        '2',
        '--beam',
        '2',
      ],
      ...['--eval-every', '50', '--lr', '0.005', '--threads', '1'],
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const losses = [...result.stdout.matchAll(/^step \d+: loss (\d+\.\d+)/gm)].map((m) => Number(m[1]));
    expect(losses.length).toBe(3);
    expect(losses[2]).toBeLessThan(losses[0]);
    expect(result.stdout).toMatch(/^step 50: exact-match \d+\.\d% on 40 held-out strings$/m);
    const final = /^exact-match (\d+\.\d)% \((\d+)\/40 held-out strings, greedy\)$/m.exec(result.stdout);
    expect(final).not.toBeNull();
    // Sorting 2-4 symbols over 3 letters: copying the source is right for about a third of the strings.
    expect(Number(final?.[2])).toBeGreaterThan(20);
    const examples = result.stdout.split('\n').filter((line) => line.startsWith('  '));
    expect(examples.length).toBe(2);
    for (const line of examples)
      expect(line).toMatch(/^ {2}[a-c]+ -> [a-c]* (ok|WRONG) \| beam 2: [a-c]* \(log p -?\d/);
  });

  it('parses defaults and refuses bad flags with a usage error', async () => {
    expect(parseSeq2SeqArgs([])).toMatchObject({
      kind: 'seq2seq',
      task: 'reverse',
      minLength: 3,
      maxLength: 12,
    });
    const cases: [string[], RegExp][] = [
      [
        ['--task', 'shuffle'],
        /^seq2seq: --task: expected reverse or sort, got "shuffle"; see loom seq2seq --help\n$/,
      ],
      [['--min-length', '5', '--max-length', '4'], /--max-length: 4 is below --min-length 5/],
      [['--alphabet', '30'], /--alphabet: at most 26 symbols, got 30/],
      [
        ['--alphabet', '2', '--max-length', '3', '--held-out', '1000'],
        /--held-out: 1000 strings would be more/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await loom(process.cwd(), 'seq2seq', ...argv);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });
});
