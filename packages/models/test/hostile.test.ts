import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadCheckpoint,
  loadModelFile,
  parseModel,
  saveCheckpoint,
  serializeLlama2c,
  serializeSafetensors,
  toHfConfig,
  toHfTensors,
} from '../src/index';
import { errorOf, randomModel, tempDir, tinyLlama } from './helpers';

/** A llama2.c header of 7 int32 followed by `body` bytes of zeros. */
function llama2cHeader(values: readonly number[], body: number): Uint8Array {
  const bytes = new Uint8Array(28 + body);
  const view = new DataView(bytes.buffer);
  for (const [i, value] of values.entries()) view.setInt32(4 * i, value, true);
  return bytes;
}

describe('hostile and broken model files', () => {
  it('refuses a llama2.c header claiming 16,000,000 layers in 1 MB by its limits, at once', () => {
    const bytes = llama2cHeader([288, 768, 16_000_000, 6, 6, 32000, 256], 1 << 20);
    const start = performance.now();
    expect(errorOf(() => parseModel(bytes, undefined, 'huge.bin'))).toMatch(
      /^huge\.bin: header says dim=288 hidden=768 layers=16000000 .*numLayers=16000000 is over Loom's limit of 4096/,
    );
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it.each([
    [[0, 768, 6, 6, 6, 32000, 256], /dim is not/],
    [[288, 768, -3, 6, 6, 32000, 256], /numLayers is not/],
    [[288, 768, 6, 7, 7, 32000, 256], /dim=288 must be a multiple of numHeads=7/],
  ])('names the bad llama2.c header field %j instead of a generic refusal', (header, reason) => {
    const message = errorOf(() => parseModel(llama2cHeader(header, 64), undefined, 'bad.bin'));
    expect(message).toMatch(reason);
    expect(message).not.toMatch(/not a model file Loom recognises/);
  });

  it('names what is wrong with a safetensors header that is an array or claims over 100 MB', () => {
    const header = (text: string, claimed = text.length) => {
      const bytes = new Uint8Array(8 + text.length);
      new DataView(bytes.buffer).setBigUint64(0, BigInt(claimed), true);
      bytes.set(new TextEncoder().encode(text), 8);
      return bytes;
    };
    const config = toHfConfig(tinyLlama);
    expect(errorOf(() => parseModel(header('[1, 2, 3]'), config, 'a.safetensors'))).toMatch(
      /a\.safetensors: the header must be a JSON object, found \[1,2,3\]/,
    );
    expect(errorOf(() => parseModel(header('{}', 200_000_000), config, 'b.safetensors'))).toMatch(
      /b\.safetensors: header length is 200000000; expected 2 to 100000000 bytes/,
    );
  });

  it.each([
    ['num_hidden_layers', 16_000_000, 'from 1 to 4096'],
    ['max_position_embeddings', 2e9, 'from 1 to 134217728'],
    ['hidden_size', 2 ** 40, 'from 1 to 65536'],
    ['vocab_size', 1e12, 'from 1 to 16777216'],
  ])(
    'refuses a config.json whose %s is %d by its limit, naming the file and key, before building anything',
    (key, value, range) => {
      const weights = serializeSafetensors(toHfTensors(tinyLlama, randomModel(tinyLlama)));
      const config = { ...toHfConfig(tinyLlama), [key]: value };
      const start = performance.now();
      expect(errorOf(() => parseModel(weights, config, 'm.safetensors'))).toBe(
        `config.json of m.safetensors: key "${key}": expected an integer ${range}, found ${value}`,
      );
      expect(performance.now() - start).toBeLessThan(1000);
    },
  );

  it('refuses a Loom checkpoint config or llama2.c header over the limits by name', () => {
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors: randomModel(tinyLlama) });
    const configPath = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(configPath, 'utf8'));
    writeFileSync(configPath, JSON.stringify({ ...json, numLayers: 1e6 }));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /config\.json: key "numLayers": expected an integer from 1 to 4096, found 1000000/,
    );
    const header = llama2cHeader([288, 768, 5000, 6, 6, 32000, 256], 64);
    expect(errorOf(() => parseModel(header, undefined, 'long.bin'))).toMatch(
      /long\.bin: .*numLayers=5000 is over Loom's limit of 4096/,
    );
  });

  it('refuses NaN and infinite weights, naming the tensor and the first bad index', () => {
    const tensors = randomModel(tinyLlama);
    const norm = tensors.find((t) => t.name === 'layers.1.ffn_norm.weight');
    if (!norm) throw new Error('test model has no layers.1.ffn_norm.weight');
    norm.data[3] = Number.NaN;
    norm.data[5] = Number.POSITIVE_INFINITY;
    expect(errorOf(() => parseModel(serializeLlama2c(tinyLlama, tensors), undefined, 'nan.bin'))).toMatch(
      /nan\.bin: tensor "layers\.1\.ffn_norm\.weight" holds 2 non-finite value\(s\), the first NaN at index 3/,
    );
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors: randomModel(tinyLlama) });
    // Corrupt a weight in place, then re-record the file so that only the values are wrong.
    const path = join(dir, 'model.safetensors');
    const bytes = readFileSync(path);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    view.setFloat32(bytes.length - 4, Number.NEGATIVE_INFINITY, true);
    writeFileSync(path, bytes);
    const configPath = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(configPath, 'utf8'));
    json.files['model.safetensors'].sha256 = execFileSync('sha256sum', [path], { encoding: 'utf8' }).split(
      ' ',
    )[0];
    writeFileSync(configPath, JSON.stringify(json));
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(/holds 1 non-finite value\(s\), the first -Infinity/);
  });

  it('keeps every manifest path inside the checkpoint directory', () => {
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors: randomModel(tinyLlama), tokenizerJson: '{}' });
    const configPath = join(dir, 'config.json');
    const original = readFileSync(configPath, 'utf8');
    const json = JSON.parse(original);
    json.files['../../etc/passwd'] = { bytes: 10, sha256: '0'.repeat(64) };
    writeFileSync(configPath, JSON.stringify(json));
    const message = errorOf(() => loadCheckpoint(dir));
    expect(message).toMatch(
      /manifest lists "\.\.\/\.\.\/etc\/passwd"; a checkpoint holds only model\.safetensors/,
    );
    expect(message).not.toMatch(/SHA-256|root:/);
    // A listed name that is a symlink out of the directory is refused too.
    writeFileSync(configPath, original);
    const outside = join(tempDir(), 'tokenizer.json');
    writeFileSync(outside, '{}');
    const link = join(dir, 'tokenizer.json');
    execFileSync('rm', [link]);
    symlinkSync(outside, link);
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /tokenizer\.json: resolves outside the checkpoint directory/,
    );
  });

  it('compares a listed file size before reading it', () => {
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors: randomModel(tinyLlama), tokenizerJson: '{}' });
    truncateSync(join(dir, 'tokenizer.json'), 3 * 1024 ** 3);
    expect(errorOf(() => loadCheckpoint(dir))).toMatch(
      /tokenizer\.json: expected 2 bytes but the file holds 3221225472/,
    );
  });

  it('refuses a FIFO and a directory as a model file at once, naming what it is', () => {
    const dir = tempDir();
    const fifo = join(dir, 'pipe.bin');
    execFileSync('mkfifo', [fifo]);
    expect(errorOf(() => loadModelFile(fifo))).toMatch(
      /pipe\.bin: is a named pipe \(FIFO\); expected a model file, a regular file/,
    );
    expect(errorOf(() => loadModelFile('/dev/zero'))).toMatch(
      /\/dev\/zero: is a device; expected a model file/,
    );
  });

  it('loads a safetensors model bigger than its header claims nothing about, and refuses a 3 GB non-model within 1 s and 100 MB', () => {
    const dir = tempDir();
    const hf = join(dir, 'hf');
    mkdirSync(hf);
    writeFileSync(join(hf, 'config.json'), JSON.stringify(toHfConfig(tinyLlama)));
    writeFileSync(
      join(hf, 'model.safetensors'),
      serializeSafetensors(toHfTensors(tinyLlama, randomModel(tinyLlama))),
    );
    expect(loadModelFile(hf).tensors.length).toBeGreaterThan(0);
    const big = join(dir, 'big.bin');
    writeFileSync(big, 'this is text, not a model\n');
    truncateSync(big, 3 * 1024 ** 3);
    const probe = `
      const { loadModelFile } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)});
      const start = performance.now();
      let message = '';
      try { loadModelFile(${JSON.stringify(big)}); } catch (error) { message = error.message; }
      console.log(JSON.stringify({ ms: performance.now() - start, rss: process.memoryUsage().rss, message }));
    `;
    const run = spawnSync(
      process.execPath,
      ['--conditions=@loom/source', '--import', 'tsx', '--input-type=module', '-e', probe],
      {
        encoding: 'utf8',
        cwd: new URL('..', import.meta.url).pathname,
      },
    );
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(result.message).toMatch(/big\.bin: not a model file Loom recognises/);
    expect(result.ms).toBeLessThan(1000);
    expect(result.rss).toBeLessThan(100 * 1024 * 1024 + 100 * 1024 * 1024);
  });
});
