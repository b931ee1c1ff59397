import { copyBytes, formatBytes } from '../bytes';
import { type ModelConfig, modelConfigProblems } from '../config';
import { type NamedTensor, numel } from '../tensor';
import {
  describeHeader,
  headerToConfig,
  LLAMA2C_HEADER_BYTES,
  LLAMA2C_VERSIONED_MAGIC,
  type Llama2cHeader,
  llama2cFloatCount,
  llama2cLayout,
} from './layout';

export interface Llama2cModel {
  config: ModelConfig;
  /** Loom names, in file order. */
  tensors: NamedTensor[];
}

export function readLlama2cHeader(bytes: Uint8Array, source: string): Llama2cHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const int = (index: number) => view.getInt32(index * 4, true);
  if (bytes.length >= 8 && int(0) === LLAMA2C_VERSIONED_MAGIC) {
    throw new Error(
      `${source}: a versioned llama2.c export (magic "ak42", version ${int(1)}); Loom reads the legacy version 0 format — re-export it with llama2.c's export.py --version 0`,
    );
  }
  if (bytes.length < LLAMA2C_HEADER_BYTES) {
    throw new Error(
      `${source}: ${formatBytes(bytes.length)} is too short for a llama2.c checkpoint (expected a ${LLAMA2C_HEADER_BYTES}-byte header of 7 int32); the file is truncated`,
    );
  }
  const header: Llama2cHeader = {
    dim: int(0),
    hiddenDim: int(1),
    numLayers: int(2),
    numHeads: int(3),
    numKvHeads: int(4),
    vocabSize: int(5),
    seqLen: int(6),
  };
  const bad = Object.entries(header).filter(([key, value]) =>
    key === 'vocabSize' ? value === 0 : value <= 0,
  );
  if (bad.length > 0) {
    throw new Error(
      `${source}: header says ${describeHeader(header)}; expected positive sizes (vocab may be negative) but ${bad.map(([key]) => key).join(', ')} ${bad.length > 1 ? 'are' : 'is'} not — not a llama2.c checkpoint, or the file is corrupt`,
    );
  }
  return header;
}

/** The exact size in bytes of the llama2.c checkpoint of a model of this config (RoPE tables included). */
export function llama2cFileBytes(config: ModelConfig): number {
  return LLAMA2C_HEADER_BYTES + 4 * llama2cFloatCount(llama2cLayout(config));
}

/**
 * Parses a legacy (version 0) llama2.c checkpoint into Loom's names and config (preset llama, normEps 1e-5,
 * ropeTheta 10000 as run.c hard-codes, tied embeddings unless the header's vocab size is negative). The file
 * size is checked exactly against the header before any tensor is read; the two legacy RoPE tables are skipped.
 */
export function parseLlama2c(bytes: Uint8Array, source = 'model.bin'): Llama2cModel {
  const header = readLlama2cHeader(bytes, source);
  const config = headerToConfig(header);
  const problems = modelConfigProblems(config);
  if (problems.length > 0) {
    throw new Error(
      `${source}: header says ${describeHeader(header)}: ${problems.join('; ')} — not a llama2.c checkpoint, or the file is corrupt`,
    );
  }
  const expected = llama2cFileBytes(config);
  if (bytes.length !== expected) {
    const verdict =
      bytes.length < expected
        ? 'the file is truncated'
        : `${formatBytes(bytes.length - expected)} too many — the header does not match the data, or it is not a legacy llama2.c export`;
    throw new Error(
      `${source}: header says ${describeHeader(header)}, so expected ${formatBytes(expected)} but the file holds ${bytes.length} — ${verdict}`,
    );
  }
  const tensors: NamedTensor[] = [];
  let offset = LLAMA2C_HEADER_BYTES;
  for (const segment of llama2cLayout(config)) {
    const size = numel(segment.shape) * 4;
    if (segment.kind === 'rope-table') {
      offset += size;
      continue;
    }
    for (const name of segment.names) {
      tensors.push({
        name,
        shape: [...segment.shape],
        data: new Float32Array(copyBytes(bytes, offset, offset + size)),
      });
      offset += size;
    }
  }
  return { config, tensors };
}
