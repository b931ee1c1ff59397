import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModelFile, serializeGguf } from '@loom/models';
import { Linear } from '@loom/nn';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgs, type ServeCommand, UsageError } from '../src/args';
import { loadServedModel } from '../src/load';
import { shared } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'loom-serve-weights-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const gguf = join(dir, 'stories260K-Q8_0.gguf');
const bin = loadModelFile(shared('models/stories260K.bin'));
writeFileSync(gguf, serializeGguf(bin.config, bin.tensors, { weightType: 'Q8_0' }));

/** The served model's Linear layers, and how many read Q8_0 blocks. */
async function serve(...flags: string[]) {
  const argv = ['--model', gguf, '--tokenizer', shared('models/tok512.bin'), ...flags];
  const served = await loadServedModel(parseArgs(argv, {}) as ServeCommand, {});
  const linears = [...served.model.modules()].filter((m) => m instanceof Linear);
  const blocks = linears.filter((m) => m.quantized?.type === 'q8_0').length;
  const quantizable = linears.filter((m) => m.inFeatures % 32 === 0).length;
  served.model.dispose();
  return { served, linears: linears.length, quantizable, blocks };
}

describe('pnpm serve --weights', () => {
  it('serves a Q8_0 GGUF with its blocks by default, every layer the file quantized reading them', async () => {
    const { served, linears, quantizable, blocks } = await serve();
    // The file quantized each linear whose input is a multiple of 32 (stories260K: all but the 172-wide w2).
    expect(blocks).toBe(quantizable);
    expect(blocks).toBeGreaterThan(20);
    expect(served.weights.mode).toBe('quantized');
    // The report counts them, and a tied output projection when it reads the embedding's blocks too.
    expect(served.weights.blocks.q8_0).toBeGreaterThanOrEqual(blocks);
    expect(served.weights.layers).toBeGreaterThanOrEqual(linears);
  });

  it('widens them with --weights f32', async () => {
    const { served, blocks } = await serve('--weights', 'f32');
    expect(blocks).toBe(0);
    expect(served.weights).toMatchObject({ mode: 'f32', blocks: {} });
  });

  it('refuses another value, naming the flag and its values', () => {
    const bad = () => parseArgs(['--model', gguf, '--weights', 'int8'], {});
    expect(bad).toThrow(UsageError);
    expect(bad).toThrow('--weights must be quantized or f32, got "int8"');
    expect(parseArgs(['--model', gguf], {})).toMatchObject({ weights: 'quantized' });
  });
});
