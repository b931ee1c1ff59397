import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

  it.each([
    [['nonsense'], /unknown suite "nonsense"/],
    [['train', '--bogus'], /Unknown option '--bogus'/],
    [['memory', '--batch', '0'], /--batch: expected an integer ≥ 1, got "0"/],
    [['train', 'gpt3'], /expected presets gpt2 and\/or llama/],
    [['generate', '--llama-cpp', '/tmp/x', '--gguf', 'm.gguf'], /need --model PATH/],
    [['generate', '--model', 'm.bin', '--llama-cpp', '/tmp/x'], /go together/],
    [['generate', '--backend', 'tpu'], /--backend: expected cpu or webgpu, got "tpu"/],
  ])('refuses %j with one line on stderr and exit code 2', (args, message) => {
    const { status, stderr } = bench(...args);
    expect(status).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});
