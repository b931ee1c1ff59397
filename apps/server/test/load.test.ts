import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharTokenizer } from '@loom/tokenizer';
import { describe, expect, it } from 'vitest';
import { parseArgs, type ServeCommand } from '../src/args';
import { chooseTemplate, loadServedModel } from '../src/load';
import { loadStories, shared } from './helpers';

describe('chat template', () => {
  it('is plain for a story model, chatml when the tokenizer has its tokens, and the one asked for otherwise', async () => {
    const stories = await loadStories();
    expect(stories.template).toBe('plain');
    stories.model.dispose();
    const chatml = CharTokenizer.fromCorpus('abc', { specialTokens: ['<|im_start|>', '<|im_end|>'] });
    expect(chooseTemplate(chatml, undefined)).toBe('chatml');
    expect(
      chooseTemplate(CharTokenizer.fromCorpus('abc', { specialTokens: ['<|im_start|>'] }), undefined),
    ).toBe('plain');
    expect(chooseTemplate(chatml, 'llama2')).toBe('llama2');
  });
});

describe('loading', () => {
  it('refuses a FIFO as the tokenizer at once instead of blocking on it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loom-serve-fifo-'));
    try {
      const fifo = join(dir, 'tokenizer.bin');
      execFileSync('mkfifo', [fifo]);
      const command = parseArgs(['--model', shared('models/stories260K.bin'), '--tokenizer', fifo], {});
      await expect(loadServedModel(command as ServeCommand, {})).rejects.toThrow(
        /tokenizer\.bin: is a named pipe \(FIFO\); expected the file of --tokenizer, a regular file/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
