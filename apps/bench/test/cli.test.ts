import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '@loom/backend-cpu';
import { tensorsFromTransformer, writeLlama2cFile } from '@loom/models';
import { makeConfig, TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { describe, expect, it } from 'vitest';

const app = fileURLToPath(new URL('..', import.meta.url));

function bench(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(
    process.execPath,
    ['--conditions=@loom/source', '--import', 'tsx', 'src/main.ts', ...args],
    {
      cwd: app,
      encoding: 'utf8',
    },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('pnpm bench', () => {
  it('lists the suites with --help and exits 0', () => {
    const { status, stdout } = bench('--help');
    expect(status).toBe(0);
    for (const suite of ['tokenizer', 'matmul', 'generate', 'memory', 'train'])
      expect(stdout).toContain(`  ${suite} `);
  });

  it("prints a suite's own flags with SUITE --help", () => {
    const { status, stdout } = bench('generate', '--help');
    expect(status).toBe(0);
    expect(stdout).toContain('--llama-cpp DIR --gguf PATH');
  });

  it('runs a suite with --flag=value and short aliases', () => {
    const { status, stdout } = bench('memory', '--config=stories15M', '--batch', '2', '-b', 'cpu');
    expect(status).toBe(0);
    expect(stdout).toMatch(/stories15M\s+2\s+256/);
  });

  it('caps the KV cache of a sliding-window model at its window', () => {
    const kv = (...args: string[]) => {
      const { status, stdout } = bench('memory', '--config', 'mistral-7b', '--dtype', 'fp16', ...args);
      expect(status).toBe(0);
      return stdout.match(/mistral-7b(?:\s+\S+){4}\s+(\d+|full)\s+\S+ GB\s+(\S+ [MG]B)/)?.slice(1);
    };
    expect(kv('--seq-len', '32768')).toEqual(['4096', '536.87 MB']);
    expect(kv('--seq-len', '4096')).toEqual(['4096', '536.87 MB']);
    expect(kv('--seq-len', '2048')).toEqual(['4096', '268.44 MB']);
    expect(kv('--seq-len', '32768', '--sliding-window', '1024')).toEqual(['1024', '134.22 MB']);
  });

  it('shows total and active parameters of a mixture of experts', () => {
    const { status, stdout } = bench('memory', '--config', 'mixtral-8x7b', '--seq-len', '1024');
    expect(status).toBe(0);
    expect(stdout).toMatch(/mixtral-8x7b(?:\s+\S+){4}\s+2\/8\s+46\.70B\s+12\.88B/);
  });

  it('measures decode on 1 and 2 threads in the same rounds, with the memory read probe and their ratios', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loom-bench-'));
    try {
      setBackend(new CpuBackend({ threads: 1 }));
      const config = makeConfig('llama', {
        vocabSize: 64,
        dim: 32,
        numLayers: 2,
        numHeads: 2,
        maxSeqLen: 32,
      });
      const model = new TransformerLM(config);
      const path = join(dir, 'tiny.bin');
      writeLlama2cFile(path, config, await tensorsFromTransformer(model));
      model.dispose();
      const { status, stdout } = bench(
        'generate',
        '--model',
        path,
        '-t',
        '1,2',
        '--tokens',
        '4',
        '--rounds',
        '1',
      );
      expect(status).toBe(0);
      const value = (model: string, measure: string) => {
        const line = stdout.split('\n').find((l) => l.includes(model) && l.includes(measure));
        return Number(line?.trim().split(/\s+/).at(-1));
      };
      for (const threads of ['1 thread', '2 threads']) {
        for (const measure of ['Loom decode 4 tokens (tok/s)', 'memory read probe, same threads (GB/s)']) {
          expect(value(`tiny.bin, ${threads}`, measure), `${threads}: ${measure}`).toBeGreaterThan(0);
        }
      }
      for (const measure of ['Loom decode / 1 thread (x)', 'memory read probe / 1 thread (x)']) {
        expect(value('tiny.bin, 2 threads', measure), measure).toBeGreaterThan(0);
      }
      expect(stdout).toContain('Loom on 1, 2 CPU threads in turn.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['nonsense'], /unknown suite "nonsense"/],
    [['train', '--bogus'], /Unknown option '--bogus'/],
    [['memory', '--batch', '0'], /--batch: expected an integer ≥ 1, got "0"/],
    [['train', 'gpt3'], /expected presets gpt2 and\/or llama/],
    [['generate', '--llama-cpp', '/tmp/x', '--gguf', 'm.gguf'], /need --model PATH/],
    [['generate', '--model', 'm.bin', '--llama-cpp', '/tmp/x'], /go together/],
    [['generate', '--backend', 'tpu'], /--backend: expected cpu or webgpu, got "tpu"/],
    [
      ['generate', '--threads', '1,1'],
      /--threads: expected a thread count ≥ 1 or a comma list of different ones \(1,2\), got "1,1"/,
    ],
    [['generate', '-t', '0'], /--threads: expected a thread count ≥ 1/],
    [
      ['generate', '-t', '1,2', '--backend', 'webgpu'],
      /--threads 1,2: a list of thread counts is for the cpu backend/,
    ],
  ])('refuses %j with one line on stderr and exit code 2', (args, message) => {
    const { status, stderr } = bench(...args);
    expect(status).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});
