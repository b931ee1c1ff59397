import { readFileSync } from 'node:fs';
import { type AtomicWriteOptions, writeFileAtomic } from './atomic-write';
import type { ModelConfig } from './config';
import { type Llama2cModel, parseLlama2c } from './llama2c/read';
import { serializeLlama2c } from './llama2c/write';
import { parseSafetensors, type SafetensorsContents } from './safetensors/read';
import { type SafetensorsWriteOptions, serializeSafetensors } from './safetensors/write';
import type { NamedTensor, StoredTensor } from './tensor';

/** Reads and parses a safetensors file; errors name the path. */
export function readSafetensorsFile(path: string): SafetensorsContents {
  return parseSafetensors(readFileSync(path), path);
}

/** Writes tensors as a safetensors file, atomically (see `writeFileAtomic`). */
export function writeSafetensorsFile(
  path: string,
  tensors: readonly StoredTensor[],
  options: SafetensorsWriteOptions & AtomicWriteOptions = {},
): void {
  writeFileAtomic(path, serializeSafetensors(tensors, options), options);
}

/** Reads and parses a legacy llama2.c `.bin`; errors name the path. */
export function readLlama2cFile(path: string): Llama2cModel {
  return parseLlama2c(readFileSync(path), path);
}

/** Writes a llama-preset model as a legacy llama2.c `.bin`, atomically. */
export function writeLlama2cFile(path: string, config: ModelConfig, tensors: readonly NamedTensor[]): void {
  writeFileAtomic(path, serializeLlama2c(config, tensors, path));
}
