import { configProblems } from '@loom/nn';
import { sizeOf } from '@loom/tensor';
import { type ByteSource, headOf, memorySource } from '../byte-source';
import { formatBytes } from '../bytes';
import type { ModelConfig } from '../config';
import type { NamedTensor } from '../tensor';
import {
  describeHeader,
  headerToConfig,
  LLAMA2C_HEADER_BYTES,
  LLAMA2C_VERSIONED_MAGIC,
  type Llama2cHeader,
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

/**
 * The exact size in bytes of the llama2.c checkpoint of a model of this config (RoPE tables
 * included), by arithmetic alone: nothing is built, so a header claiming millions of layers
 * costs nothing to refuse.
 */
export function llama2cFileBytes(config: ModelConfig): number {
  const { dim, hiddenDim, vocabSize, numLayers, maxSeqLen } = config;
  const headSize = dim / config.numHeads;
  const kvDim = config.numKvHeads * headSize;
  const perLayer = 2 * dim + 2 * dim * dim + 2 * kvDim * dim + 3 * hiddenDim * dim;
  const classifier = config.tiedEmbeddings ? 0 : vocabSize * dim;
  const floats = vocabSize * dim + numLayers * perLayer + dim + maxSeqLen * headSize + classifier;
  return LLAMA2C_HEADER_BYTES + 4 * floats;
}

/**
 * Parses a legacy (version 0) llama2.c checkpoint into Loom's names and config (preset llama, normEps 1e-5,
 * ropeTheta 10000 as run.c hard-codes, tied embeddings unless the header's vocab size is negative). The file
 * size is checked exactly against the header before any tensor is read; the two legacy RoPE tables are skipped.
 */
export function parseLlama2c(bytes: Uint8Array, source = 'model.bin'): Llama2cModel {
  return readLlama2c(memorySource(bytes, source));
}

/** `parseLlama2c` over any byte source: the header first, then only the tensors' byte ranges. */
export function readLlama2c(file: ByteSource): Llama2cModel {
  const source = file.name;
  const header = readLlama2cHeader(headOf(file, LLAMA2C_HEADER_BYTES), source);
  const config = headerToConfig(header);
  const problems = configProblems(config);
  if (problems.length > 0) {
    throw new Error(
      `${source}: header says ${describeHeader(header)}: ${problems.join('; ')} — not a llama2.c checkpoint, or the file is corrupt`,
    );
  }
  const expected = llama2cFileBytes(config);
  if (file.size !== expected) {
    const verdict =
      file.size < expected
        ? 'the file is truncated, or the header is corrupt'
        : `${formatBytes(file.size - expected)} too many — the header does not match the data, or it is not a legacy llama2.c export`;
    throw new Error(
      `${source}: header says ${describeHeader(header)}, so expected ${formatBytes(expected)} but the file holds ${file.size} — ${verdict}`,
    );
  }
  const tensors: NamedTensor[] = [];
  let offset = LLAMA2C_HEADER_BYTES;
  for (const segment of llama2cLayout(config)) {
    const size = sizeOf(segment.shape) * 4;
    if (segment.kind === 'rope-table') {
      offset += size;
      continue;
    }
    for (const name of segment.names) {
      tensors.push({
        name,
        shape: [...segment.shape],
        data: new Float32Array(file.read(offset, offset + size)),
      });
      offset += size;
    }
  }
  return { config, tensors };
}
