import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { main } from '../src/cli';
import { experiments } from '../src/experiments/index';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) }, out, err };
}

describe('pnpm experiment', () => {
  it('names the experiments in its usage and refuses an unknown one or a bad seed with status 2', async () => {
    const help = capture();
    expect(await main(['--help'], help.io)).toBe(0);
    for (const e of experiments) expect(help.out.join('')).toContain(e.name);
    const unknown = capture();
    expect(await main(['nope'], unknown.io)).toBe(2);
    expect(unknown.err.join('')).toContain('unknown experiment "nope"; expected one of');
    const seed = capture();
    expect(await main(['rank', '--seed=1.5'], seed.io)).toBe(2);
    expect(seed.err.join('')).toContain('--seed must be a non-negative integer');
    const none = capture();
    expect(await main([], none.io)).toBe(2);
  });

  for (const experiment of experiments) {
    it(`${experiment.name}: a quick run writes a report that states a result, with its charts`, async () => {
      const dir = mkdtempSync(join(tmpdir(), `loom-${experiment.name}-`));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const run = capture();
      expect(await main([experiment.name, '--quick', '--out', dir], run.io)).toBe(0);
      const markdown = readFileSync(join(dir, 'report.md'), 'utf8');
      expect(markdown).toContain('## Result');
      const charts = [...markdown.matchAll(/!\[[^\]]*\]\(([a-z0-9-]+\.svg)\)/g)].map((m) => m[1]);
      expect(charts.length).toBeGreaterThan(0);
      for (const chart of charts) expect(existsSync(join(dir, chart))).toBe(true);
    });
  }
});
