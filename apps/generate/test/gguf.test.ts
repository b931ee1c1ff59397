import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from './run-cli';

const gguf = '../shared/data/gguf/stories260K-F32.gguf';
/** What llama.cpp's llama-cli printed for this file, prompt included, greedy, 100 tokens. */
const reference = readFileSync(
  fileURLToPath(new URL('../../../../shared/data/gguf/stories260K-F32.greedy-100.txt', import.meta.url)),
  'utf8',
);

describe('pnpm generate on a GGUF file written by llama.cpp', () => {
  it('prints what llama.cpp printed, token for token, using the vocabulary inside the file', async () => {
    const { status, stdout } = await cli(
      ...['--model', gguf, '--prompt', 'Once upon a time', '--temperature', '0', '--max-tokens', '100'],
    );
    expect(status).toBe(0);
    // llama-cli prints a leading space (the SentencePiece prefix) and ends with a newline.
    expect(stdout.trim()).toBe(reference.trim());
  });
});
