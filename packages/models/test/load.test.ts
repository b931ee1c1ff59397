import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  detectModelFormat,
  loadModelFile,
  parseModel,
  saveCheckpoint,
  serializeSafetensors,
  toHfConfig,
  toHfTensors,
  writeSafetensorsFile,
} from '../src/index';
import { dataDir, errorOf, randomModel, tempDir, tinyGpt2, tinyLlama } from './helpers';

const storiesPath = join(dataDir, 'models/stories260K.bin');

/** A Hugging Face model directory: config.json and the weights under `file`. */
function hfDirectory(config: typeof tinyLlama, file = 'model.safetensors', seed = 3) {
  const dir = tempDir();
  const tensors = randomModel(config, seed);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(config)));
  writeSafetensorsFile(join(dir, file), toHfTensors(config, tensors), { metadata: { format: 'pt' } });
  return { dir, tensors, path: join(dir, file) };
}

describe('loadModelFile', () => {
  it('loads a llama2.c .bin', () => {
    const model = loadModelFile(storiesPath);
    expect(model.format).toBe('llama2c');
    expect(model.config.numKvHeads).toBe(4);
    expect(model.tensors.length).toBe(1 + 5 * 9 + 1);
  });

  it('loads a Hugging Face Llama directory or its safetensors file', () => {
    const config = { ...tinyLlama, tiedEmbeddings: false };
    const { dir, tensors, path } = hfDirectory(config);
    for (const target of [dir, path]) {
      const model = loadModelFile(target);
      expect(model.format).toBe('hf');
      expect(model.config).toEqual(config);
      expect(model.tensors).toEqual(tensors);
    }
  });

  it('loads a GPT-2 checkpoint with transformer.-prefixed names and mask buffers', () => {
    const dir = tempDir();
    const tensors = randomModel(tinyGpt2, 4);
    const hf = toHfTensors(tinyGpt2, tensors).map((t) => ({ ...t, name: `transformer.${t.name}` }));
    hf.push({ name: 'transformer.h.0.attn.bias', shape: [1, 1, 5, 5], data: new Float32Array(25).fill(1) });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(tinyGpt2)));
    writeSafetensorsFile(join(dir, 'gpt2.safetensors'), hf);
    const model = loadModelFile(join(dir, 'gpt2.safetensors'));
    expect(model.format).toBe('hf');
    expect(model.tensors).toEqual(tensors);
  });

  it('loads half-precision weights widened to float32', () => {
    const dir = tempDir();
    const tensors = randomModel(tinyLlama, 8);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(tinyLlama)));
    writeFileSync(
      join(dir, 'model.safetensors'),
      serializeSafetensors(toHfTensors(tinyLlama, tensors), { floatDType: 'BF16' }),
    );
    const model = loadModelFile(dir);
    for (const [i, tensor] of model.tensors.entries()) {
      const worst = Math.max(...tensor.data.map((value, j) => Math.abs(value - tensors[i].data[j])));
      expect(worst).toBeLessThan(2 ** -8);
    }
  });

  it('loads a Loom checkpoint from its directory or its model.safetensors', () => {
    const dir = tempDir();
    const tensors = randomModel(tinyGpt2);
    saveCheckpoint(dir, { config: tinyGpt2, tensors, tokenizerJson: '{"format":"loom-tokenizer"}' });
    for (const target of [dir, join(dir, 'model.safetensors')]) {
      const model = loadModelFile(target);
      expect(model.format).toBe('loom');
      expect(model.tensors).toEqual(tensors);
      expect(model.tokenizerJson).toBe('{"format":"loom-tokenizer"}');
    }
    writeSafetensorsFile(join(dir, 'other.safetensors'), tensors);
    expect(errorOf(() => loadModelFile(join(dir, 'other.safetensors')))).toMatch(
      /other\.safetensors: sits in a Loom checkpoint directory, whose weights are model\.safetensors; pass the directory/,
    );
  });

  it('names the file and what is wrong for anything else', () => {
    const dir = tempDir();
    const file = (name: string, bytes: Uint8Array | string) => {
      writeFileSync(join(dir, name), bytes);
      return join(dir, name);
    };
    const pattern = (found: string) =>
      new RegExp(
        `: not a model file Loom recognises; expected GGUF, safetensors .* or a llama2\\.c \\.bin .* — ${found}`,
      );
    expect(errorOf(() => loadModelFile(file('model.pt', 'PK\x03\x04rest of a zip')))).toMatch(
      pattern('it is a zip archive, as PyTorch \\.pt/\\.bin pickles are — convert it to safetensors'),
    );
    expect(errorOf(() => loadModelFile(file('m.gguf', 'GGUF\x03\x00\x00\x00')))).toMatch(
      /m\.gguf: not a GGUF file \(it does not start with "GGUF" and a 24-byte header\)/,
    );
    expect(errorOf(() => loadModelFile(file('config.json', '{"model_type": "llama"}')))).toMatch(
      pattern('it is JSON text — pass the weights file'),
    );
    expect(errorOf(() => loadModelFile(file('notes.txt', 'hello world, this is text')))).toMatch(
      pattern('the first bytes are 68 65 6c 6c 6f 20 77 6f'),
    );
    expect(errorOf(() => loadModelFile(file('empty.bin', '')))).toMatch(
      pattern('the first bytes are \\(none, the file is empty\\)'),
    );
    expect(errorOf(() => loadModelFile(join(dir, 'absent.bin')))).toMatch(
      /absent\.bin: no such file or directory/,
    );
    const versioned = file('v2.bin', new Uint8Array(Int32Array.of(0x616b3432, 2, 64, 172).buffer));
    expect(errorOf(() => loadModelFile(versioned))).toMatch(
      /v2\.bin: a versioned llama2\.c export .* --version 0/,
    );
  });

  it('reports truncation once the format is recognised', () => {
    const dir = tempDir();
    const stories = readFileSync(storiesPath);
    writeFileSync(join(dir, 'cut.bin'), stories.subarray(0, 500_000));
    expect(errorOf(() => loadModelFile(join(dir, 'cut.bin')))).toMatch(
      /cut\.bin: header says dim=64 .* so expected 1056540 bytes but the file holds 500000 — the file is truncated/,
    );
    const { path } = hfDirectory(tinyLlama);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 100));
    expect(errorOf(() => loadModelFile(path))).toMatch(
      /model\.safetensors: tensor ".*" has data_offsets .* the file is truncated/,
    );
  });

  it('asks for what a safetensors model lacks', () => {
    const { dir, path } = hfDirectory(tinyLlama);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ ...toHfConfig(tinyLlama), num_hidden_layers: 3 }),
    );
    expect(errorOf(() => loadModelFile(path))).toMatch(
      /model\.safetensors: the tensors do not match .* layers=3 .* missing \(9\): layers\.2\.attention_norm\.weight \[8\]/,
    );
    const lonely = tempDir();
    writeSafetensorsFile(join(lonely, 'w.safetensors'), randomModel(tinyLlama));
    expect(errorOf(() => loadModelFile(join(lonely, 'w.safetensors')))).toMatch(
      /w\.safetensors: a safetensors file says nothing about the architecture; expected a config\.json beside it .* does not exist/,
    );
    expect(errorOf(() => loadModelFile(lonely))).toMatch(
      /must hold model\.safetensors \(or a sharded checkpoint's model\.safetensors\.index\.json\) beside a config\.json/,
    );
  });

  it('loads a sharded Hugging Face checkpoint and checks each shard against its index', () => {
    const dir = tempDir();
    const hf = toHfTensors(tinyLlama, randomModel(tinyLlama));
    const half = Math.ceil(hf.length / 2);
    const shards = [hf.slice(0, half), hf.slice(half)];
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    for (const [i, tensors] of shards.entries())
      writeFileSync(join(dir, names[i]), serializeSafetensors(tensors));
    const weightMap = Object.fromEntries(
      shards.flatMap((tensors, i) => tensors.map((t) => [t.name, names[i]])),
    );
    const index = join(dir, 'model.safetensors.index.json');
    writeFileSync(index, JSON.stringify({ metadata: {}, weight_map: weightMap }));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(tinyLlama)));
    const whole = parseModel(serializeSafetensors(hf), toHfConfig(tinyLlama), 'whole.safetensors');
    for (const path of [dir, index]) {
      const loaded = loadModelFile(path);
      expect(loaded.format).toBe('hf');
      expect(loaded.tensors).toEqual(whole.tensors);
    }
    const moved = hf[0].name;
    writeFileSync(index, JSON.stringify({ weight_map: { ...weightMap, [moved]: names[1] } }));
    expect(errorOf(() => loadModelFile(dir))).toMatch(
      new RegExp(
        `model-00002-of-00002\\.safetensors: lacks ${moved.replaceAll('.', '\\.')}, which .* places in it`,
      ),
    );
    writeFileSync(
      index,
      JSON.stringify({ weight_map: { ...weightMap, [moved]: '../elsewhere.safetensors' } }),
    );
    expect(errorOf(() => loadModelFile(dir))).toMatch(
      /expected the name of a \.safetensors file beside the index/,
    );
  });
});

describe('parseModel and detectModelFormat (bytes, no file system)', () => {
  it('recognises formats from content', () => {
    expect(detectModelFormat(readFileSync(storiesPath))).toBe('llama2c');
    expect(detectModelFormat(readFileSync(storiesPath).subarray(0, 100))).toBe('llama2c');
    expect(detectModelFormat(serializeSafetensors([]))).toBe('safetensors');
    expect(detectModelFormat(new TextEncoder().encode('plain text, not a model'))).toBeUndefined();
  });

  it('parses fetched bytes with the config.json that came with them', () => {
    const tensors = randomModel(tinyLlama);
    const weights = serializeSafetensors(toHfTensors(tinyLlama, tensors));
    const model = parseModel(weights, toHfConfig(tinyLlama), 'https://example.org/model.safetensors');
    expect(model.format).toBe('hf');
    expect(model.tensors).toEqual(tensors);
    expect(errorOf(() => parseModel(weights, undefined, 'remote'))).toMatch(
      /remote: a safetensors file says nothing about the architecture; pass the config\.json/,
    );
    const dir = join(tempDir(), 'ckpt');
    mkdirSync(dir);
    saveCheckpoint(dir, { config: tinyLlama, tensors });
    const loom = parseModel(
      readFileSync(join(dir, 'model.safetensors')),
      JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')),
    );
    expect(loom.format).toBe('loom');
    expect(loom.tensors).toEqual(tensors);
    expect(parseModel(readFileSync(storiesPath), undefined).format).toBe('llama2c');
  });
});
