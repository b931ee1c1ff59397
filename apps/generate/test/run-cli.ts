import { fileURLToPath } from 'node:url';
import { main } from '../src/cli';

/** The repository root, as pnpm passes it in INIT_CWD when the root script runs. */
export const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `pnpm generate ARGV` in this process, relative paths against the repository root. */
export async function cli(...argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await main(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { INIT_CWD: root },
  });
  return { status, stdout, stderr };
}
