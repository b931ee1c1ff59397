import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { Linear } from '@loom/nn';
import { setBackend, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { loadModelFile, tensorsFromTransformer, transformerFromTensors } from '../src/index';
import { dataDir } from './helpers';

describe('a model loaded with weights: quantized', () => {
  it('holds the blocks of its quantized matrices and embedding and no f32 copy of them', async () => {
    const backend = new CpuBackend({ threads: 1 });
    setBackend(backend);
    const file = join(dataDir, 'gguf', 'rand15M-Q8_0.gguf');
    const loaded = loadModelFile(file, { weights: 'quantized' });
    const kept = loaded.quantized ?? [];
    expect(kept.length).toBe(44); // 6 layers of 7 products, the output projection and the embedding
    const start = backend.liveBytes();
    const f32 = transformerFromTensors(loadModelFile(file), file);
    const f32Bytes = backend.liveBytes() - start;
    const quantized = transformerFromTensors(loaded, file);
    const quantizedBytes = backend.liveBytes() - start - f32Bytes;
    // By arithmetic: the f32 model less the f32 weights of the kept matrices, plus their scales and codes.
    const widened = kept.reduce((n, q) => n + 4 * q.shape[0] * q.shape[1], 0);
    const blocks = kept.reduce((n, q) => n + 4 * (q.scales.length + q.quants.length), 0);
    expect(quantizedBytes).toBe(f32Bytes - widened + blocks);
    // Q8_0 holds 36 bytes per 32 values against f32's 128.
    expect(blocks * 128).toBe(widened * 36);
    console.log(
      `rand15M Q8_0: ${(f32Bytes / 2 ** 20).toFixed(1)} MiB held as f32, ${(quantizedBytes / 2 ** 20).toFixed(1)} MiB with the blocks alone`,
    );
    const linears = [...quantized.modules()].filter((m) => m instanceof Linear);
    expect(linears.every((m) => m.quantized !== undefined && m.weight.isDisposed)).toBe(true);
    expect(quantized.tokEmbeddings.quantized).toBeDefined();
    expect(quantized.tokEmbeddings.weight.isDisposed).toBe(true);
    // It still runs; what would read the released weights says why it cannot.
    const ids = tensor([1, 2, 3], [1, 3], { dtype: 'i32' });
    const logits = quantized.forward(ids); // [1, 3, vocab]
    expect(logits.shape).toEqual([1, 3, loaded.config.vocabSize]);
    expect((await logits.data()).every(Number.isFinite)).toBe(true);
    await expect(tensorsFromTransformer(quantized)).rejects.toThrow(
      /parameter tok_embeddings\.weight holds no float32 values: its layer reads quantized blocks only .* load it with weights: 'f32' to save it/,
    );
    for (const t of [ids, logits]) t.dispose();
    f32.dispose();
    quantized.dispose();
    expect(backend.liveBytes()).toBe(start);
  });
});
