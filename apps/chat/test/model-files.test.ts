import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseModel, saveCheckpoint } from '@loom/models';
import { loadTokenizer } from '@loom/tokenizer';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelFile } from '../src/protocol';
import { readModelFiles } from '../src/worker/model-files';

const models = join(import.meta.dirname, '../../../../shared/data/models');
const file = (path: string, name = path.split('/').pop()!): ModelFile => {
  const bytes = readFileSync(path);
  return { name, bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) };
};
const text = (name: string, content: string): ModelFile => ({
  name,
  bytes: new TextEncoder().encode(content).buffer,
});
const stories = () => file(join(models, 'stories260K.bin'));
const tok512 = () => file(join(models, 'tok512.bin'));

describe('readModelFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loom-chat-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a llama2.c model and tokenizer picked in any order', async () => {
    const { loaded, tokenizer, source } = await readModelFiles([tok512(), stories()]);
    expect(loaded.format).toBe('llama2c');
    expect(tokenizer.vocabSize).toBe(512);
    expect(source).toBe('stories260K.bin, tok512.bin');
  });

  it('gives the library error for a file that is not a model', async () => {
    await expect(readModelFiles([text('notes.txt', 'my notes')])).rejects.toThrow(
      /^notes\.txt: not a model file Loom recognises/,
    );
  });

  it('asks for the tokenizer when only weights are picked, and names a stray file', async () => {
    await expect(readModelFiles([stories()])).rejects.toThrow(/no tokenizer among stories260K\.bin/);
    await expect(readModelFiles([stories(), tok512(), text('notes.txt', 'x')])).rejects.toThrow(
      /^notes\.txt: /,
    );
  });

  it('reads a Loom checkpoint, ignoring the trainer state, and refuses one whose weights were altered', async () => {
    const llama = parseModel(new Uint8Array(stories().bytes), undefined);
    const tokenizer = loadTokenizer(new Uint8Array(tok512().bytes));
    saveCheckpoint(dir, { ...llama, tokenizerJson: JSON.stringify(tokenizer.toJSON()) });
    const files = readdirSync(dir).map((name) => file(join(dir, name)));
    const { loaded, source } = await readModelFiles(files);
    expect(loaded.format).toBe('loom');
    expect(source).toBe('model.safetensors, tokenizer.json, config.json');
    const altered = files.map((f) => {
      if (f.name !== 'model.safetensors') return f;
      const bytes = new Uint8Array(f.bytes.slice(0));
      bytes[bytes.length - 1] ^= 1;
      return { name: f.name, bytes: bytes.buffer };
    });
    await expect(readModelFiles(altered)).rejects.toThrow(/^model\.safetensors: its size or SHA-256 differs/);
  });

  it('asks for the config.json of safetensors weights', async () => {
    const files = readdirSync(dir)
      .filter((name) => name !== 'config.json')
      .map((name) => file(join(dir, name)));
    await expect(readModelFiles(files)).rejects.toThrow(/pass the config\.json/);
  });
});
