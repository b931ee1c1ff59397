import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { inferenceMemory } from '@loom/kvcache';
import { isLoomConfigJson, type ModelConfig, parseHfConfig, parseLoomConfigJson } from '@loom/models';
import {
  activeParameterCount,
  type ConfigInput,
  defaultLoraTargets,
  loraParameterCount,
  makeConfig,
  parameterCount,
} from '@loom/nn';
import { type FlagValues, integerFlag, stringFlag, UsageError } from '../flags';
import type { Row, Suite, SuiteResult } from '../suite';

/** Known model shapes by name: the llama2.c TinyStories models, Llama 2 7B, Mistral 7B and GPT-2 small. */
const PRESETS: Readonly<Record<string, () => ModelConfig>> = {
  stories260K: () =>
    llama({
      vocabSize: 512,
      dim: 64,
      hiddenDim: 172,
      numLayers: 5,
      numHeads: 8,
      numKvHeads: 4,
      maxSeqLen: 512,
    }),
  stories15M: () =>
    llama({ vocabSize: 32000, dim: 288, hiddenDim: 768, numLayers: 6, numHeads: 6, maxSeqLen: 256 }),
  stories42M: () =>
    llama({ vocabSize: 32000, dim: 512, hiddenDim: 1376, numLayers: 8, numHeads: 8, maxSeqLen: 1024 }),
  stories110M: () =>
    llama({ vocabSize: 32000, dim: 768, hiddenDim: 2048, numLayers: 12, numHeads: 12, maxSeqLen: 1024 }),
  'llama2-7b': () =>
    llama(
      { vocabSize: 32000, dim: 4096, hiddenDim: 11008, numLayers: 32, numHeads: 32, maxSeqLen: 4096 },
      false,
    ),
  'mistral-7b': () =>
    llama(
      {
        vocabSize: 32000,
        dim: 4096,
        hiddenDim: 14336,
        numLayers: 32,
        numHeads: 32,
        numKvHeads: 8,
        maxSeqLen: 32768,
        slidingWindow: 4096,
      },
      false,
    ),
  'mixtral-8x7b': () =>
    llama(
      {
        vocabSize: 32000,
        dim: 4096,
        hiddenDim: 14336,
        numLayers: 32,
        numHeads: 32,
        numKvHeads: 8,
        maxSeqLen: 32768,
        ropeTheta: 1e6,
        moe: { experts: 8, topK: 2 },
      },
      false,
    ),
  gpt2: () => ({
    ...makeConfig('gpt2', { vocabSize: 50257, dim: 768, numLayers: 12, numHeads: 12, maxSeqLen: 1024 }),
  }),
};

function llama(input: ConfigInput, tied = true): ModelConfig {
  return { ...makeConfig('llama', { ...input, tiedEmbeddings: tied }) };
}

/** Bytes per element of each storage type. */
const DTYPE_BYTES: Readonly<Record<string, number>> = { fp32: 4, fp16: 2, bf16: 2, int8: 1 };

const USAGE =
  '[--config NAME|config.json] [--batch N] [--seq-len N] [--dtype fp32|fp16|bf16|int8] [--kv-heads N] [--sliding-window N] [--lora-rank N [--lora-targets q_proj,v_proj]]';

/** Bytes of AdamW's two float32 moments per trainable value. */
const ADAMW_BYTES = 2 * 4;

/** Trainable parameters and optimizer bytes of a full fine-tune and, with --lora-rank, of LoRA adapters. */
function trainingColumns(config: ModelConfig, values: FlagValues): Row {
  const rank = integerFlag(values, 'lora-rank', 1);
  const full = parameterCount(config);
  const columns: Row = { 'trainable (full)': full, 'AdamW (full)': formatBytes(ADAMW_BYTES * full) };
  if (rank === undefined) return columns;
  const given = stringFlag(values, 'lora-targets');
  const targets = given === undefined ? defaultLoraTargets(config.preset) : given.split(',');
  let lora: number;
  try {
    lora = loraParameterCount(config, rank, targets);
  } catch (error) {
    throw new UsageError(`--lora-targets: ${(error as Error).message}`);
  }
  return {
    ...columns,
    [`trainable (LoRA r=${rank})`]: `${lora} (${((100 * lora) / full).toFixed(2)}%)`,
    'AdamW (LoRA)': formatBytes(ADAMW_BYTES * lora),
  };
}

/** With experts: how many, and the parameters in all (all resident in memory) against those one token uses. */
function expertColumns(config: ModelConfig): Row {
  if (config.moe === undefined) return {};
  return {
    experts: `${config.moe.topK}/${config.moe.experts}`,
    'params (total)': formatCount(parameterCount(config)),
    'params (active)': formatCount(activeParameterCount(config)),
  };
}

/** A parameter count in billions or millions, for the table. */
function formatCount(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : `${(n / 1e6).toFixed(2)}M`;
}

/** A preset by name, or a Hugging Face or Loom config.json (relative to where pnpm was started). */
function loadConfig(name: string): ModelConfig {
  const preset = PRESETS[name];
  if (preset) return preset();
  if (!name.endsWith('.json')) {
    throw new UsageError(
      `--config ${JSON.stringify(name)} is neither a preset (${Object.keys(PRESETS).join(', ')}) nor a config.json`,
    );
  }
  const path = resolve(process.env.INIT_CWD ?? process.cwd(), name);
  const json: unknown = JSON.parse(readFileSync(path, 'utf8'));
  return isLoomConfigJson(json) ? parseLoomConfigJson(json, path).config : parseHfConfig(json, path);
}

/** Bytes in decimal units: `34.36 GB`, `1.06 MB`. */
function formatBytes(bytes: number): string {
  const units: [number, string][] = [
    [1e12, 'TB'],
    [1e9, 'GB'],
    [1e6, 'MB'],
    [1e3, 'kB'],
  ];
  const [scale, unit] = units.find(([size]) => bytes >= size) ?? [1, 'B'];
  return `${(bytes / scale).toFixed(2)} ${unit}`;
}

function row(name: string, config: ModelConfig, values: FlagValues): Row {
  const dtype = stringFlag(values, 'dtype') ?? 'fp32';
  const bytes = DTYPE_BYTES[dtype];
  if (bytes === undefined) {
    throw new UsageError(`--dtype must be one of ${Object.keys(DTYPE_BYTES).join(', ')}, got ${dtype}`);
  }
  const numKvHeads = integerFlag(values, 'kv-heads', 1) ?? config.numKvHeads;
  if (config.numHeads % numKvHeads !== 0) {
    throw new UsageError(`--kv-heads ${numKvHeads} must divide the ${config.numHeads} heads of ${name}`);
  }
  const slidingWindow = integerFlag(values, 'sliding-window', 1) ?? config.slidingWindow;
  const shaped = { ...config, numKvHeads, slidingWindow };
  const batch = integerFlag(values, 'batch', 1) ?? 1;
  const seqLen = integerFlag(values, 'seq-len', 1) ?? config.maxSeqLen;
  const memory = inferenceMemory(shaped, {
    batch,
    seqLen,
    parameters: parameterCount(shaped),
    weightBytes: bytes,
  });
  return {
    config: name,
    batch,
    'seq len': seqLen,
    dtype,
    'kv heads': `${numKvHeads}/${config.numHeads}`,
    ...expertColumns(shaped),
    window: slidingWindow ?? 'full',
    weights: formatBytes(memory.weights),
    'KV cache': formatBytes(memory.kvCache),
    activations: formatBytes(memory.activations),
    total: formatBytes(memory.total),
    ...trainingColumns(shaped, values),
  };
}

export const memorySuite: Suite = {
  name: 'memory',
  description:
    'inference memory of a model config: weights, KV cache, activations (--config NAME|config.json)',
  flags: {
    config: { type: 'string' },
    batch: { type: 'string' },
    'seq-len': { type: 'string' },
    dtype: { type: 'string' },
    'kv-heads': { type: 'string' },
    'sliding-window': { type: 'string' },
    'lora-rank': { type: 'string' },
    'lora-targets': { type: 'string' },
  },
  usage: USAGE,
  async run({ values }): Promise<SuiteResult> {
    const name = stringFlag(values, 'config');
    const names = name === undefined ? Object.keys(PRESETS) : [name];
    return {
      title: 'inference memory (decimal units: 1 GB = 10^9 bytes)',
      rows: names.map((n) => row(n, loadConfig(n), values)),
      notes: [
        'KV cache = batch × seq len × layers × 2 × kv heads × head dim × bytes per element; with a sliding window W (a ring cache of W slots) seq len is capped at W.',
        'activations: one prefill of every sequence at once (no score matrix: attention is fused).',
        'experts (k/E): weights hold all E experts; a token passes through k of them and the router (params (active)).',
        'training: AdamW keeps two float32 moments per trainable value; LoRA trains r·(in + out) per adapted module per layer and freezes the rest.',
        `pnpm bench memory ${USAGE}; presets: ${Object.keys(PRESETS).join(', ')}.`,
      ],
    };
  },
};
