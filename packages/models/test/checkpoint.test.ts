import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CheckpointInput, loadCheckpoint, saveCheckpoint } from '../src/index';
import { errorOf, randomModel, tempDir, tinyGpt2, tinyLlama } from './helpers';

const tokenizerJson = JSON.stringify({ format: 'loom-tokenizer', kind: 'char', chars: 'abc' });

function input(seed = 1): CheckpointInput {
  return {
    config: tinyGpt2,
    tensors: randomModel(tinyGpt2, seed),
    tokenizerJson,
    extra: {
      tensors: [
        { name: 'adam.m.tok_embeddings.weight', shape: [13, 8], data: new Float32Array(104).fill(0.5) },
        { name: 'rng', shape: [4], data: Int32Array.of(1, -2, 3, 4) },
      ],
      json: JSON.stringify({ step: 100 * seed, bestValLoss: 1.93 }),
    },
  };
}

describe('Loom checkpoints', () => {
  it('saves and loads every file, creating the directory', () => {
    const dir = join(tempDir(), 'run', 'step-120');
    const saved = input();
    saveCheckpoint(dir, saved);
    expect(readdirSync(dir).sort()).toEqual([
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'trainer-state.json',
      'trainer-state.safetensors',
    ]);
    const loaded = loadCheckpoint(dir);
    expect(loaded.config).toEqual(saved.config);
    expect(loaded.tensors).toEqual(saved.tensors);
    expect(loaded.tokenizerJson).toBe(tokenizerJson);
    expect(loaded.extra).toEqual({ tensors: saved.extra?.tensors, json: saved.extra?.json });
  });

  it('writes a readable config.json with the format marker, the config and a manifest', () => {
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors: randomModel(tinyLlama) });
    const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(json).toMatchObject({ format: 'loom', version: 1, ...tinyLlama });
    expect(Object.keys(json.files)).toEqual(['model.safetensors']);
    expect(json.files['model.safetensors'].bytes).toBe(readFileSync(join(dir, 'model.safetensors')).length);
    expect(json.files['model.safetensors'].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(loadCheckpoint(dir).tokenizerJson).toBeUndefined();
    expect(loadCheckpoint(dir).extra).toBeUndefined();
  });

  it('overwrites an older save, removing optional files the new one lacks', () => {
    const dir = tempDir();
    saveCheckpoint(dir, input(1));
    const next = { config: tinyGpt2, tensors: randomModel(tinyGpt2, 2) };
    saveCheckpoint(dir, next);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(loadCheckpoint(dir).tensors).toEqual(next.tensors);
  });

  it('refuses to save tensors that do not match the config, leaving the old checkpoint', () => {
    const dir = tempDir();
    saveCheckpoint(dir, input(1));
    const wrong = { config: tinyGpt2, tensors: randomModel(tinyGpt2, 2).slice(1) };
    expect(errorOf(() => saveCheckpoint(dir, wrong))).toMatch(
      /model\.safetensors: the tensors do not match .* missing \(1\): tok_embeddings\.weight \[13, 8\]/,
    );
    expect(loadCheckpoint(dir).tensors).toEqual(input(1).tensors);
  });

  it('refuses a truncated or corrupted file, naming it', () => {
    const dir = tempDir();
    saveCheckpoint(dir, input());
    const modelPath = join(dir, 'model.safetensors');
    const bytes = readFileSync(modelPath);
    writeFileSync(modelPath, bytes.subarray(0, bytes.length - 10));
    expect(errorOf(() => loadCheckpoint(dir))).toBe(
      `${modelPath}: expected ${bytes.length} bytes but the file holds ${bytes.length - 10} (recorded in config.json) — the file is corrupt or truncated, or a save was interrupted; use an earlier checkpoint`,
    );
    bytes[bytes.length - 1] ^= 0x40;
    writeFileSync(modelPath, bytes);
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /model\.safetensors: expected SHA-256 [0-9a-f]{64} but the contents hash to [0-9a-f]{64} \(recorded in config\.json\)/,
    );
  });

  it('detects a save interrupted between renames (new weights, old config.json)', () => {
    const older = tempDir();
    const newer = tempDir();
    saveCheckpoint(older, input(1));
    saveCheckpoint(newer, input(2));
    copyFileSync(join(newer, 'model.safetensors'), join(older, 'model.safetensors'));
    expect(errorOf(() => loadCheckpoint(older))).toMatch(
      /model\.safetensors: expected SHA-256 .* a save was interrupted/,
    );
  });

  it('a save failing while renaming says so, leaves no temporary files, and the mix is refused', () => {
    const dir = tempDir();
    saveCheckpoint(dir, input(1));
    // A non-empty directory where the tokenizer goes makes its rename fail, after the trainer state was renamed.
    rmSync(join(dir, 'tokenizer.json'));
    mkdirSync(join(dir, 'tokenizer.json', 'inside'), { recursive: true });
    expect(errorOf(() => saveCheckpoint(dir, input(2)))).toMatch(
      /saving the checkpoint failed while renaming its files into place .* which loadCheckpoint refuses — save again/,
    );
    expect(readdirSync(dir).filter((name) => name.includes('.tmp-'))).toEqual([]);
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /trainer-state\.json: expected SHA-256 .* a save was interrupted/,
    );
  });

  it('explains what is wrong with a directory that is not a Loom checkpoint', () => {
    const dir = tempDir();
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /config\.json: missing; a Loom checkpoint directory has a config\.json/,
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'llama' }));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /config\.json: key "format" is undefined; expected "loom" — not a Loom checkpoint config/,
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ format: 'loom', version: 9 }));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /checkpoint version 9 is newer than this Loom reads \(1\)/,
    );
    writeFileSync(join(dir, 'config.json'), '{"format": "loom",');
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(/config\.json: not valid JSON/);
    saveCheckpoint(dir, input());
    const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...json, dim: 'eight' }));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /config\.json: key "dim": expected an integer from 1 to 65536, found "eight"/,
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify(json));
    rmSync(join(dir, 'tokenizer.json'));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /tokenizer\.json: missing; config\.json beside it lists it \(\d+ bytes\) — the checkpoint is incomplete/,
    );
  });
});
