import { createHash } from 'node:crypto';
import { mutateBytes } from './mutate-bytes';
import { mutateJsonText } from './mutate-json';
import { caseSeed, Random } from './random';
import type { Seed, Target } from './seeds';

/** One input to try: a seed's files, some of them mutated. */
export interface FuzzCase {
  readonly seed: string;
  readonly target: Target;
  readonly entry: string;
  readonly files: Record<string, Uint8Array>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function isJson(bytes: Uint8Array): boolean {
  return bytes[0] === 0x7b;
}

/** A safetensors file with its JSON header mutated structurally and the 8-byte length prefix fixed to match. */
function mutateSafetensorsHeader(bytes: Uint8Array, random: Random): Uint8Array {
  if (bytes.length < 8) return bytes;
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  if (8 + length > bytes.length) return bytes;
  const header = encoder.encode(mutateJsonText(decoder.decode(bytes.subarray(8, 8 + length)), random));
  const out = new Uint8Array(8 + header.length + bytes.length - 8 - length);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  out.set(bytes.subarray(8 + length), 8 + header.length);
  return out;
}

function mutateFile(name: string, bytes: Uint8Array, random: Random): Uint8Array {
  if (random.chance(0.5)) {
    if (isJson(bytes)) return encoder.encode(mutateJsonText(decoder.decode(bytes), random));
    if (name.endsWith('.safetensors')) return mutateSafetensorsHeader(bytes, random);
  }
  return mutateBytes(bytes, random);
}

/**
 * A Loom checkpoint's manifest records each file's size and SHA-256, so a mutated file is refused by its hash before
 * its reader sees it. Most cases re-record the manifest, so that the readers behind it are fuzzed too.
 */
function rerecordManifest(files: Record<string, Uint8Array>): void {
  let config: unknown;
  try {
    config = JSON.parse(decoder.decode(files['config.json']));
  } catch {
    return;
  }
  if (typeof config !== 'object' || config === null || !('files' in config)) return;
  const manifest = config.files;
  if (typeof manifest !== 'object' || manifest === null) return;
  for (const [name, bytes] of Object.entries(files)) {
    if (name in manifest) {
      (manifest as Record<string, unknown>)[name] = {
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
    }
  }
  files['config.json'] = encoder.encode(JSON.stringify(config));
}

/** Case `index` of a run seeded `seed`: a seed picked at random with one or two of its files mutated. */
export function makeCase(seeds: readonly Seed[], seed: number, index: number): FuzzCase {
  const random = new Random(caseSeed(seed, index));
  const base = random.pick(seeds);
  const files = { ...base.files };
  const names = Object.keys(files);
  const mutated = random.chance(0.8) ? 1 : Math.min(2, names.length);
  for (let i = 0; i < mutated; i++) {
    const name = random.pick(names);
    files[name] = mutateFile(name, files[name], random);
  }
  if (base.name === 'loom-checkpoint' && random.chance(0.7)) rerecordManifest(files);
  return { seed: base.name, target: base.target, entry: base.entry, files };
}
