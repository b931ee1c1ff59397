import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { Linear, type TransformerLM } from '@loom/nn';
import { dequantize, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isCompactWeight,
  type LoadedModel,
  loadModelFile,
  repackGgufBlocks,
  transformerFromTensors,
} from '../src/index';
import { dataDir, errorOf } from './helpers';

const gguf = (name: string) => join(dataDir, 'gguf', name);

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

const loads = new Map<string, LoadedModel>();
/** The file loaded once per mode. */
function load(file: string, weights: 'f32' | 'quantized'): LoadedModel {
  if (!existsSync(gguf(file))) throw new Error(`${gguf(file)} is missing; the shared data is incomplete`);
  const key = `${file} ${weights}`;
  const loaded = loads.get(key) ?? loadModelFile(gguf(file), { weights });
  loads.set(key, loaded);
  return loaded;
}

/** The greedy continuation of `prompt` by `model` (full forwards, no cache). */
async function greedyTokens(model: TransformerLM, prompt: number[], steps: number): Promise<number[]> {
  const tokens = [...prompt];
  for (let s = 0; s < steps; s++)
    tokens.push(argmaxOf((await logitsOf(model, tokens)).at(-1) ?? new Float32Array()));
  return tokens;
}

/** The logits at every position of `tokens`, one row each. */
async function logitsOf(model: TransformerLM, tokens: number[]): Promise<Float32Array[]> {
  const ids = tensor(tokens, [1, tokens.length], { dtype: 'i32' });
  const out = model.forward(ids); // [1, T, vocab]
  const all = (await out.data()) as Float32Array;
  const vocab = out.shape[2];
  ids.dispose();
  out.dispose();
  return tokens.map((_, t) => all.slice(t * vocab, (t + 1) * vocab));
}

function argmaxOf(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

describe('GGUF weights kept quantized', () => {
  it.each([
    ['rand15M-Q8_0.gguf', { q8_0: 44 }],
    ['rand15M-Q4_0.gguf', { q4_0: 43, q8_0: 1 }],
  ])(
    '%s keeps every linear weight and the embedding of its own type, and nothing by default',
    (file, counts) => {
      if (file.includes('Q8_0')) expect(load(file, 'f32').quantized).toBeUndefined();
      const loaded = load(file, 'quantized');
      const kept = loaded.quantized ?? [];
      const byType: Record<string, number> = {};
      for (const q of kept) byType[q.type] = (byType[q.type] ?? 0) + 1;
      expect(byType).toEqual(counts);
      expect(kept.every((q) => isCompactWeight(q.name))).toBe(true);
      expect(kept.map((q) => q.name)).toContain('tok_embeddings.weight');
      // Kept as blocks only: no float32 form of them is widened; the norms are.
      const names = new Set(kept.map((q) => q.name));
      expect(loaded.tensors.filter((t) => names.has(t.name))).toEqual([]);
      expect(loaded.tensors.map((t) => t.name)).toContain('norm.weight');
      // The blocks decode to exactly the widened float32 weights.
      const wq = kept.find((q) => q.name === 'layers.0.attention.wq.weight');
      const widened = load(file, 'f32').tensors.find((t) => t.name === 'layers.0.attention.wq.weight');
      if (!wq || !widened) throw new Error('layer 0 wq is missing');
      const decoded = dequantize(
        wq.type,
        tensor(wq.scales, [288, 9]),
        tensor(wq.quants, [288, wq.quants.length / 288], { dtype: 'i32' }),
      );
      return decoded.data().then((values) => {
        expect(Array.from(values)).toEqual(Array.from(widened.data));
        decoded.dispose();
      });
    },
  );

  it.each([
    ['rand15M-Q8_0.gguf', 0.02],
    ['rand15M-Q4_0.gguf', 0.02],
  ])(
    '%s: logits of the quantized products follow the widened f32 model within int8 activation rounding',
    async (file, tol) => {
      const loaded = load(file, 'quantized');
      // The same file's widened tensors: the f32 model.
      const f32 = transformerFromTensors(load(file, 'f32'), file);
      const quantized = transformerFromTensors(loaded, file);
      const linears = [...quantized.modules()].filter((m) => m instanceof Linear);
      expect(linears.length).toBe(43);
      expect(linears.every((m) => m.quantized !== undefined)).toBe(true);
      // Both read the f32 model's greedy text, so every position compares the same context.
      const tokens = await greedyTokens(f32, [1, 403, 2501, 931], 4);
      const [a, b] = [await logitsOf(f32, tokens), await logitsOf(quantized, tokens)];
      let worst = 0;
      let largest = 0;
      for (let t = 0; t < tokens.length; t++) {
        for (let i = 0; i < a[t].length; i++) {
          worst = Math.max(worst, Math.abs(a[t][i] - b[t][i]));
          largest = Math.max(largest, Math.abs(a[t][i]));
        }
      }
      // Where the int8 rounding of the activations changes a greedy choice, the f32 logits were a near tie.
      const changed = tokens.map((_, t) => t).filter((t) => argmaxOf(a[t]) !== argmaxOf(b[t]));
      for (const t of changed) {
        const margin = a[t][argmaxOf(a[t])] - a[t][argmaxOf(b[t])];
        expect(margin, `position ${t}: f32 margin over the quantized choice`).toBeLessThanOrEqual(2 * worst);
      }
      console.log(
        `${file}: logits max |quantized - f32| ${worst.toExponential(2)} (largest |logit| ${largest.toFixed(2)}); ` +
          `greedy choice changed at ${changed.length} of ${tokens.length} positions`,
      );
      expect(worst).toBeLessThanOrEqual(tol * largest);
      expect(changed.length).toBeLessThanOrEqual(tokens.length / 2);
      f32.dispose();
      quantized.dispose();
    },
  );

  it('refuses an unknown weights mode, naming the option', () => {
    const options = JSON.parse('{"weights":"int4"}');
    expect(errorOf(() => loadModelFile(gguf('rand15M-Q8_0.gguf'), options))).toMatch(
      /weights must be 'f32' or 'quantized', got "int4"/,
    );
  });

  it('refuses blocks whose byte count does not fit the shape, before allocating', () => {
    expect(errorOf(() => repackGgufBlocks('w', 'q8_0', [2, 64], new Uint8Array(135)))).toMatch(
      /^w: q8_0 \[2, 64\] needs 136 bytes \(4 blocks of 34\), got 135/,
    );
    expect(errorOf(() => repackGgufBlocks('w', 'q4_0', [2, 48], new Uint8Array(54)))).toMatch(
      /^w: a q4_0 row must be a multiple of 32 values, got \[2, 48\]/,
    );
  });
});
