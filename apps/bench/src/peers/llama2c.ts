import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Greedy decode tokens/s of llama2.c's `run` binary (built by the user; given by path) on a
 * llama2.c `.bin`: `run MODEL -z TOKENIZER -t 0 -n STEPS`, which prints "achieved tok/s", with
 * OMP_NUM_THREADS set to `threads` (its OpenMP build's threads; the plain build runs on one).
 */
export async function llama2cRate(
  binary: string,
  model: string,
  tokenizer: string,
  steps: number,
  threads: number,
): Promise<number> {
  const { stdout, stderr } = await run(binary, [model, '-z', tokenizer, '-t', '0', '-n', String(steps)], {
    maxBuffer: 16 << 20,
    env: { ...process.env, OMP_NUM_THREADS: String(threads) },
  });
  const match = /achieved tok\/s: ([0-9.]+)/.exec(`${stdout}\n${stderr}`);
  if (!match) throw new Error(`bench generate --llama2c: ${binary} printed no "achieved tok/s"`);
  return Number(match[1]);
}
