import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { Linear } from '@loom/nn';
import { InferenceSession } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loom } from './loom-io';
import { writeKQuantLlama } from './random-llama';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));
const tok512 = join(models, 'tok512.bin');
const dir = mkdtempSync(join(tmpdir(), 'loom-q4k-blocks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** llama.cpp's greedy tokens on the Loom-written Q4_K file (fixtures/k-quants-peer.ts regenerates them). */
const peer: { runs: Record<string, { prompt_ids: number[]; ids: number[] }> } = JSON.parse(
  readFileSync(new URL('fixtures/k-quants-peer.json', import.meta.url), 'utf8'),
);

/** Below this top-2 logit margin the two may pick differently: both round activations to 8 bits, not alike. */
const NEAR_TIE = 0.05;

describe('loom quantize --type q4_k, loaded with its blocks kept', () => {
  const bin = join(dir, 'rand.bin');
  const gguf = join(dir, 'rand-q4_k-pure.gguf');
  beforeAll(async () => {
    writeKQuantLlama(bin);
    const result = await loom(dir, 'quantize', bin, gguf, '--tokenizer', tok512, '--type', 'q4_k', '--pure');
    expect(result.status).toBe(0);
  });

  it("generates llama.cpp's greedy tokens with every product reading the q4_k blocks", async () => {
    setBackend(new CpuBackend());
    const loaded = loadModelFile(gguf, { weights: 'quantized' });
    const model = transformerFromTensors(loaded, gguf);
    const linears = [...model.modules()].filter((m) => m instanceof Linear);
    expect(linears.length).toBe(15); // 2 layers × 7, and the output projection
    expect(linears.every((m) => m.quantized?.type === 'q4_k')).toBe(true);
    const run = peer.runs['q4_k-pure'];
    const session = new InferenceSession(model);
    const [ids, margins]: [number[], number[]] = [[], []];
    let logits = session.feed(run.prompt_ids);
    for (let step = 0; step < run.ids.length; step++) {
      const row = Array.from(await logits.data(), Number);
      logits.dispose();
      const best = row.indexOf(Math.max(...row));
      ids.push(best);
      margins.push(row[best] - Math.max(...row.filter((_, id) => id !== best)));
      logits = session.feed([best]);
    }
    logits.dispose();
    session.dispose();
    model.dispose();
    const tie = margins.findIndex((margin) => margin < NEAR_TIE);
    const decided = tie === -1 ? ids.length : tie;
    expect(decided).toBeGreaterThanOrEqual(16);
    expect(ids.slice(0, decided)).toEqual(run.ids.slice(0, decided));
  });
});
