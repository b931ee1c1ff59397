import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './run-cli';

describe('pnpm generate on files that are not regular files', () => {
  it('refuses a FIFO as the tokenizer at once instead of blocking on it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loom-fifo-'));
    try {
      const fifo = join(dir, 'tokenizer.bin');
      execFileSync('mkfifo', [fifo]);
      const { status, stderr } = await cli(
        ...['--model', '../shared/data/models/stories260K.bin', '--tokenizer', fifo, '--prompt', 'hi'],
      );
      expect(status).toBe(1);
      expect(stderr).toMatch(
        /tokenizer\.bin: is a named pipe \(FIFO\); expected the file of --tokenizer, a regular file/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
