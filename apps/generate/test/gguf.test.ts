import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModelFile, serializeGguf } from '@loom/models';
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

describe('--tokenizer naming a GGUF model', () => {
  it('borrows its vocabulary: the llama2.c weights with the GGUF vocabulary print what llama.cpp printed', async () => {
    const { status, stdout } = await cli(
      ...['--model', '../shared/data/models/stories260K.bin', '--tokenizer', gguf],
      ...['--prompt', 'Once upon a time', '--temperature', '0', '--max-tokens', '100'],
    );
    expect(status).toBe(0);
    expect(stdout.trim()).toBe(reference.trim());
  });

  it('refuses a GGUF without a vocabulary, naming the file and what to pass instead', async () => {
    const loaded = loadModelFile(fileURLToPath(new URL(`../../../${gguf}`, import.meta.url)));
    const dir = mkdtempSync(join(tmpdir(), 'loom-gguf-vocab-'));
    const bare = join(dir, 'bare.gguf');
    writeFileSync(bare, serializeGguf(loaded.config, loaded.tensors));
    const { status, stderr } = await cli(
      ...['--model', '../shared/data/models/stories260K.bin', '--tokenizer', bare, '--prompt', 'Once'],
    );
    rmSync(dir, { recursive: true, force: true });
    expect(status).not.toBe(0);
    expect(stderr).toContain('bare.gguf');
    expect(stderr).toContain('carries no vocabulary');
  });
});
