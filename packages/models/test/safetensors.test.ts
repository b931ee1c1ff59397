import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseSafetensors,
  readSafetensorsFile,
  type StoredTensor,
  serializeSafetensors,
  writeFileAtomic,
  writeSafetensorsFile,
} from '../src/index';
import { errorOf, seededRandom, tempDir } from './helpers';

/** A safetensors file from a header (object or raw text) and data bytes, optionally lying about the header length. */
function rawFile(header: unknown, data: Uint8Array, headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

const sample: StoredTensor[] = [
  { name: 'a', shape: [2, 3], data: Float32Array.from([1, -2, 3.5, 0, 1e-3, -7]) },
  { name: 'step', shape: [], data: Int32Array.of(42) },
  { name: 'empty', shape: [0, 4], data: new Float32Array(0) },
  { name: 'b.weight', shape: [3], data: Float32Array.from([0.25, 65504, -1 / 3]) },
];

describe('safetensors', () => {
  it('round-trips F32 and I32 tensors and metadata', () => {
    const bytes = serializeSafetensors(sample, { metadata: { format: 'pt', note: 'hi' } });
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerLength % 8).toBe(0);
    const parsed = parseSafetensors(bytes, 'x.safetensors');
    expect(parsed.metadata).toEqual({ format: 'pt', note: 'hi' });
    expect(parsed.tensors).toEqual(sample);
    expect(parsed.tensors[1].data).toBeInstanceOf(Int32Array);
    expect(parsed.dtypes.get('a')).toBe('F32');
    expect(parsed.dtypes.get('step')).toBe('I32');
  });

  it('writes the layout of the reference implementation', () => {
    const bytes = serializeSafetensors([{ name: 'x', shape: [2], data: Float32Array.of(1, 2) }]);
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
    expect(header).toEqual({ x: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } });
    expect([...new Float32Array(bytes.slice(8 + headerLength).buffer)]).toEqual([1, 2]);
  });

  it('stores floats as F16 or BF16 and widens them on load', () => {
    const random = seededRandom(3);
    const data = Float32Array.from({ length: 100 }, () => (random() - 0.5) * 10);
    for (const [dtype, tolerance] of [
      ['F16', 2 ** -11],
      ['BF16', 2 ** -8],
    ] as const) {
      const bytes = serializeSafetensors([{ name: 'w', shape: [10, 10], data }], { floatDType: dtype });
      expect(bytes.length).toBeLessThan(8 + 100 + 200);
      const parsed = parseSafetensors(bytes);
      expect(parsed.dtypes.get('w')).toBe(dtype);
      const back = parsed.tensors[0].data;
      expect(back).toBeInstanceOf(Float32Array);
      const worst = Math.max(...data.map((value, i) => Math.abs(back[i] - value) / Math.abs(value)));
      expect(worst).toBeLessThanOrEqual(tolerance);
    }
  });

  it('reads a file whose data starts unaligned', () => {
    const data = new Uint8Array(Float32Array.of(1.5, -2).buffer);
    const bytes = rawFile({ t: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, data);
    expect(
      (8 + JSON.stringify({ t: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }).length) % 4,
    ).not.toBe(0);
    expect([...parseSafetensors(bytes).tensors[0].data]).toEqual([1.5, -2]);
  });

  it('refuses duplicate and reserved names and wrong data lengths when writing', () => {
    const t = { name: 'x', shape: [1], data: Float32Array.of(1) };
    expect(errorOf(() => serializeSafetensors([t, t]))).toMatch(/"x".*appears twice/);
    expect(errorOf(() => serializeSafetensors([{ ...t, name: '__metadata__' }]))).toMatch(/reserved/);
    expect(errorOf(() => serializeSafetensors([{ ...t, shape: [2] }]))).toMatch(
      /\[2\] holds 2 elements but its data has 1/,
    );
  });

  describe('corrupt files are refused with the file named', () => {
    const good = serializeSafetensors(sample);
    const f32 = new Uint8Array(new Float32Array(4).buffer);
    const entry = (dtype: unknown, shape: unknown, offsets: unknown) => ({
      dtype,
      shape,
      data_offsets: offsets,
    });

    it('truncated', () => {
      expect(errorOf(() => parseSafetensors(good.subarray(0, good.length - 3), 'cut.safetensors'))).toMatch(
        /^cut\.safetensors: tensor "b\.weight" has data_offsets \[\d+, \d+\] beyond the \d+ bytes of data in the file; the file is truncated/,
      );
      expect(errorOf(() => parseSafetensors(good.subarray(0, 5), 'cut.safetensors'))).toMatch(
        /cut\.safetensors: 5 bytes is too short .* truncated/,
      );
      expect(errorOf(() => parseSafetensors(good.subarray(0, 40), 'cut.safetensors'))).toMatch(
        /cut\.safetensors: header length says \d+ bytes but the file holds only 32 bytes after it; the file is truncated/,
      );
    });

    it('header length too big', () => {
      const bytes = rawFile({}, new Uint8Array(0), 2 ** 40);
      expect(errorOf(() => parseSafetensors(bytes, 'big.safetensors'))).toBe(
        'big.safetensors: header length is 1099511627776; expected 2 to 100000000 bytes — the file is corrupt or not a safetensors file',
      );
    });

    it('bad JSON and non-object headers', () => {
      expect(
        errorOf(() => parseSafetensors(rawFile('{"a": [1,', new Uint8Array(0)), 'bad.safetensors')),
      ).toMatch(/^bad\.safetensors \(safetensors header\): not valid JSON \(.+\); the file is corrupt/);
      expect(
        errorOf(() => parseSafetensors(rawFile('[1, 2]', new Uint8Array(0)), 'bad.safetensors')),
      ).toMatch(/bad\.safetensors: the header must be a JSON object, found \[1,2\]/);
      const notUtf8 = rawFile('{}', new Uint8Array(0));
      notUtf8[9] = 0xff;
      expect(errorOf(() => parseSafetensors(notUtf8, 'bad.safetensors'))).toMatch(/not UTF-8/);
    });

    it('offsets out of range, overlapping, with gaps, or not matching the shape', () => {
      const outOfRange = rawFile({ w: entry('F32', [4], [0, 32]) }, f32);
      expect(errorOf(() => parseSafetensors(outOfRange, 'o.safetensors'))).toBe(
        'o.safetensors: tensor "w" has data_offsets [0, 32] beyond the 16 bytes of data in the file; the file is truncated or corrupt',
      );
      const overlap = rawFile({ a: entry('F32', [3], [0, 12]), b: entry('F32', [2], [8, 16]) }, f32);
      expect(errorOf(() => parseSafetensors(overlap, 'o.safetensors'))).toMatch(
        /tensor "b" has data_offsets \[8, 16\]; expected it to begin at 12 — it overlaps the previous tensor/,
      );
      const gap = rawFile({ a: entry('F32', [1], [0, 4]), b: entry('F32', [2], [8, 16]) }, f32);
      expect(errorOf(() => parseSafetensors(gap, 'o.safetensors'))).toMatch(
        /tensor "b" .* leaves a gap before it/,
      );
      const size = rawFile({ a: entry('F32', [2, 3], [0, 16]) }, f32);
      expect(errorOf(() => parseSafetensors(size, 'o.safetensors'))).toMatch(
        /tensor "a" \(F32 \[2, 3\]\) needs 24 bytes but its data_offsets \[0, 16\] span 16 bytes/,
      );
      const trailing = rawFile({ a: entry('F32', [2], [0, 8]) }, f32);
      expect(errorOf(() => parseSafetensors(trailing, 'o.safetensors'))).toMatch(
        /the tensors end at byte 8 of the data but the file holds 16 bytes of data; 8 bytes are not part of any tensor/,
      );
      const reversed = rawFile({ a: entry('F32', [0], [8, 4]) }, f32);
      expect(errorOf(() => parseSafetensors(reversed, 'o.safetensors'))).toMatch(
        /tensor "a": data_offsets must be \[begin, end\] with 0 <= begin <= end, found \[8,4\]/,
      );
    });

    it('wrong dtype string and malformed entries', () => {
      const wrong = rawFile({ w: entry('F64', [2], [0, 16]) }, f32);
      expect(errorOf(() => parseSafetensors(wrong, 'd.safetensors'))).toBe(
        'd.safetensors: tensor "w": dtype "F64" is not one Loom reads; expected one of F32, F16, BF16, I32 — convert the checkpoint to F32, F16 or BF16',
      );
      expect(
        errorOf(() => parseSafetensors(rawFile({ w: entry('F32', [-1], [0, 16]) }, f32), 'd.st')),
      ).toMatch(/d\.st: tensor "w": shape must be an array of non-negative integers, found \[-1\]/);
      expect(errorOf(() => parseSafetensors(rawFile({ w: 3 }, f32), 'd.st'))).toMatch(
        /tensor "w": expected an object/,
      );
      const metadata = rawFile({ __metadata__: { a: 1 } }, new Uint8Array(0));
      expect(errorOf(() => parseSafetensors(metadata, 'd.st'))).toMatch(
        /__metadata__\.a must be a string, found 1/,
      );
    });
  });

  describe('atomic writes', () => {
    it('writes and reads back a file, leaving no temporary file', () => {
      const dir = tempDir();
      const path = join(dir, 'w.safetensors');
      writeSafetensorsFile(path, sample, { metadata: { step: '3' } });
      expect(readSafetensorsFile(path).tensors).toEqual(sample);
      expect(readdirSync(dir)).toEqual(['w.safetensors']);
    });

    it('a failure midway leaves the old file intact and removes the temporary file', () => {
      const dir = tempDir();
      const path = join(dir, 'w.safetensors');
      writeFileSync(path, 'old contents');
      const big = new Uint8Array(40 << 20).fill(7);
      const progress: number[] = [];
      const message = errorOf(() =>
        writeFileAtomic(path, big, {
          onProgress: (written) => {
            progress.push(written);
            if (progress.length === 2) throw new Error('simulated crash');
          },
        }),
      );
      expect(message).toBe(
        `${path}: writing failed (simulated crash); the existing file, if any, is unchanged`,
      );
      expect(progress.length).toBe(2);
      expect(progress[1]).toBeLessThan(big.length);
      expect(readFileSync(path, 'utf8')).toBe('old contents');
      expect(readdirSync(dir)).toEqual(['w.safetensors']);
    });

    it('a failed rename removes the temporary file and leaves the target as it was', () => {
      const dir = tempDir();
      const target = join(dir, 'occupied');
      mkdirSync(join(target, 'inside'), { recursive: true }); // renaming a file over a non-empty directory fails
      expect(errorOf(() => writeFileAtomic(target, Uint8Array.of(3)))).toMatch(
        /occupied: could not rename the written data into place/,
      );
      expect(readdirSync(dir)).toEqual(['occupied']);
      expect(readdirSync(target)).toEqual(['inside']);
    });
  });
});
