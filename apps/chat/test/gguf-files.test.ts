import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectedTensors, parseModel, serializeGguf } from '@loom/models';
import { sizeOf } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import type { ModelFile } from '../src/protocol';
import { checkModelFits, heldWeightBytes } from '../src/worker/memory-fit';
import { readModelFiles } from '../src/worker/model-files';

const data = join(import.meta.dirname, '../../../../shared/data');
const file = (path: string, name = path.split('/').pop()!): ModelFile => {
  const bytes = readFileSync(path);
  return { name, bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) };
};
const q8 = join(data, 'gguf/rand15M-Q8_0.gguf');

describe('the chat page on a Q8_0 GGUF file', () => {
  it('keeps its blocks, reads its own vocabulary, and counts the blocks’ bytes against the memory limit', async () => {
    const { loaded, tokenizer, source } = await readModelFiles([file(q8)]);
    expect(source).toBe('rand15M-Q8_0.gguf');
    expect(tokenizer.vocabSize).toBe(loaded.config.vocabSize);
    const quantized = loaded.quantized ?? [];
    expect(quantized.length).toBeGreaterThan(40); // 7 linears in each of 6 layers, and the output projection
    expect(quantized.every((q) => q.type === 'q8_0')).toBe(true);
    // The widened weights: every parameter's float32 values (the kept linears have none in `loaded`).
    const widened = expectedTensors(loaded.config).reduce((sum, spec) => sum + 4 * sizeOf(spec.shape), 0);
    const names = new Set(quantized.map((q) => q.name));
    expect(loaded.tensors.filter((t) => names.has(t.name))).toEqual([]);
    const held = heldWeightBytes(loaded);
    // Q8_0 takes 34 bytes per 32 values against f32's 128 (and a tied embedding stays f32 for its lookups).
    expect(held).toBeLessThan(0.75 * widened);
    const context = 16;
    const fits = (totalBytes: number) => () =>
      checkModelFits(loaded, source, context, { backend: 'cpu', totalBytes, totalLimit: 'the memory limit' });
    // Room for the blocks and a small cache, not for the widened weights: it loads.
    expect(fits((held + widened) / 2)).not.toThrow();
    expect(fits(held)).toThrow(/rand15M-Q8_0\.gguf: the weights take .*, more than the memory limit/);
  });

  it('asks for a tokenizer when the GGUF file carries no vocabulary', async () => {
    const bin = parseModel(readFileSync(join(data, 'models/stories260K.bin')), undefined);
    const bare = serializeGguf(bin.config, bin.tensors, { weightType: 'Q8_0' });
    const picked: ModelFile = { name: 'bare.gguf', bytes: new Uint8Array(bare).buffer };
    await expect(readModelFiles([picked])).rejects.toThrow(
      /^bare\.gguf: this GGUF file carries no vocabulary, and no tokenizer was picked; add the model's tokenizer/,
    );
  });
});
