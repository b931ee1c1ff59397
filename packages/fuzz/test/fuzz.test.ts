import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, runFuzz } from '../src/run';
import { classify } from '../src/run-case';

const REGRESSIONS = fileURLToPath(new URL('../regressions/', import.meta.url));
/** Cases per CI run: a few thousand, with a fixed seed so that a failure reproduces with `--seed 1`. */
const CASES = 5000;

describe('fuzzing every format Loom reads', () => {
  it('ends every kept regression case in a valid load or a clear error within the limits', async () => {
    const dirs = readdirSync(REGRESSIONS).map((name) => REGRESSIONS + name);
    expect(dirs.length).toBeGreaterThan(0);
    const report = await runFuzz({ kind: 'replay', dirs });
    expect(report.findings).toEqual([]);
    expect(report.cases).toBe(dirs.length);
  });

  it(`ends ${CASES} mutated inputs (seed 1) in a valid load or a clear error, each under 512 MB and 10 s`, async () => {
    const report = await runFuzz({ kind: 'generated', seed: 1, cases: CASES, workers: 2 });
    console.log(
      `fuzz: ${report.cases} cases: ${report.loaded} loaded, ${report.refused} refused clearly, ` +
        `${report.findings.length} findings; peak memory of a case ${(report.peakRssBytes / 1024 ** 2).toFixed(0)} MB`,
    );
    expect(report.findings).toEqual([]);
    expect(report.cases).toBe(CASES);
    // Mutations that always break the file would fuzz only the first check of each reader.
    expect(report.loaded).toBeGreaterThan(CASES / 50);
    expect(report.peakRssBytes).toBeLessThan(DEFAULT_LIMITS.memoryBytes);
  });

  it('reports a case over the memory limit as a finding, and goes on with the next case', async () => {
    const report = await runFuzz(
      { kind: 'generated', seed: 1, cases: 2, workers: 1 },
      { memoryBytes: 8 * 1024 ** 2, caseMs: 10_000 },
    );
    expect(report.cases).toBe(2);
    expect(report.findings.map((finding) => finding.index)).toEqual([0, 1]);
    expect(report.findings[0].problem).toMatch(/over the 8388608-byte limit|over 8388608/);
  });

  it('counts only a plain Error naming the input as a clear refusal', () => {
    const dir = '/tmp/case';
    expect(classify(new Error(`${dir}/model.bin: truncated`), dir).kind).toBe('refused');
    expect(classify(new Error('CharTokenizer: listed twice'), dir).kind).toBe('unclear');
    expect(classify(new RangeError(`${dir}/x: Invalid array length`), dir).kind).toBe('unclear');
    expect(classify('a string', dir).kind).toBe('unclear');
  });
});
