import { type AtomicWriteOptions, writeFileAtomic } from './atomic-write';
import type { ModelConfig } from './config';
import { withFileSource } from './file-source';
import { type Llama2cModel, readLlama2c } from './llama2c/read';
import { serializeLlama2c } from './llama2c/write';
import { readSafetensors, type SafetensorsContents } from './safetensors/read';
import { type SafetensorsWriteOptions, serializeSafetensors } from './safetensors/write';
import type { NamedTensor, StoredTensor } from './tensor';

/** Reads and parses a safetensors file (header first, then each tensor's range); errors name the path. */
export function readSafetensorsFile(path: string): SafetensorsContents {
  return withFileSource(path, 'a safetensors file', readSafetensors);
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
  return withFileSource(path, 'a llama2.c .bin', readLlama2c);
}

/** Writes a llama-preset model as a legacy llama2.c `.bin`, atomically. */
export function writeLlama2cFile(path: string, config: ModelConfig, tensors: readonly NamedTensor[]): void {
  writeFileAtomic(path, serializeLlama2c(config, tensors, path));
}
