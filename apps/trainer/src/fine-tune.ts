import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type LoadedModel,
  loadModelFile,
  saveCheckpoint,
  saveLoraAdapter,
  tensorsFromTransformer,
} from '@loom/models';
import {
  applyLora,
  type Lora,
  loraParameterCount,
  memoryEstimate,
  parameterCount,
  type TransformerConfig,
  type TransformerLM,
} from '@loom/nn';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import type { TrainOptions } from './options';

/** Where a LoRA run writes its adapter (PEFT layout) and the merged model (a Loom checkpoint), inside --out. */
export const LORA_DIRS = { adapter: 'adapter', merged: 'merged' } as const;

/** Loom's names of a llama's linear layers, accepted by --lora-targets beside PEFT's. */
const LLAMA_ALIASES: Readonly<Record<string, string>> = {
  wq: 'q_proj',
  wk: 'k_proj',
  wv: 'v_proj',
  wo: 'o_proj',
  w1: 'gate_proj',
  w3: 'up_proj',
  w2: 'down_proj',
};

/** The PEFT module names --lora-targets names (Loom's llama names translated); undefined: PEFT's default. */
export function loraTargets(o: TrainOptions, config: TransformerConfig): string[] | undefined {
  if (o.loraTargets === undefined) return undefined;
  const names = o.loraTargets.split(',').map((name) => name.trim());
  return config.preset === 'llama' ? names.map((name) => LLAMA_ALIASES[name] ?? name) : names;
}

/** The --init-from model, its block checked against the model's context. */
export function loadInitial(o: TrainOptions): LoadedModel {
  if (o.initFrom === undefined) throw new Error('loadInitial: no --init-from given');
  const loaded = loadModelFile(o.initFrom);
  if (o.block > loaded.config.maxSeqLen) {
    throw new Error(
      `--init-from ${o.initFrom}: the model reads at most ${loaded.config.maxSeqLen} positions (maxSeqLen), but --block is ${o.block}; use --block ${loaded.config.maxSeqLen} or less`,
    );
  }
  return loaded;
}

/**
 * The tokenizer of the --init-from model: its own (a Loom checkpoint's tokenizer.json), else --init-tokenizer;
 * undefined when it has neither (the run then builds --tokenizer from the data, which the model must cover).
 */
export function initialTokenizer(o: TrainOptions, initial: LoadedModel): Tokenizer | undefined {
  if (initial.tokenizerJson !== undefined) {
    return loadTokenizer(new TextEncoder().encode(initial.tokenizerJson), `${o.initFrom} (tokenizer.json)`);
  }
  if (o.initTokenizer === undefined) return undefined;
  return loadTokenizer(readFileSync(o.initTokenizer), o.initTokenizer);
}

/** Adds the run's adapters to `model` (whose weights then stay frozen: only the adapters are trained). */
export function applyRunLora(model: TransformerLM, o: TrainOptions): Lora {
  return applyLora(model, {
    rank: o.loraRank,
    alpha: o.loraAlpha,
    dropout: o.loraDropout,
    targets: loraTargets(o, model.config),
    seed: o.seed,
  });
}

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(2)} MB`;
}

/**
 * The line a LoRA run prints: trainable parameters, and float32 training memory (weights, gradients, AdamW's two
 * moments, activations of memoryEstimate) with LoRA and when every weight is trained. With LoRA the base weights
 * have no gradients and no optimizer state; the adapters' own activations (rank wide) are left out.
 */
export function describeLora(lora: Lora, o: TrainOptions): string {
  const config = lora.model.config;
  const total = parameterCount(config);
  const trainable = loraParameterCount(config, lora.settings.rank, lora.settings.targets);
  const full = memoryEstimate(config, o.batch, o.block);
  const bytes = 4;
  const optimizer = 2 * bytes * trainable;
  const withLora = full.weights + bytes * trainable + bytes * trainable + optimizer + full.activations;
  const { rank, alpha, dropout, targets } = lora.settings;
  return (
    `lora:  rank ${rank}, alpha ${alpha}, dropout ${dropout} on ${targets.join(', ')}; ` +
    `${trainable.toLocaleString('en-US')} trainable of ${(total + trainable).toLocaleString('en-US')} parameters ` +
    `(${((100 * trainable) / total).toFixed(2)}% of the base); optimizer state ${mb(optimizer)} (full: ${mb(full.optimizer)}); ` +
    `training memory about ${mb(withLora)} (full: ${mb(full.total)})\n`
  );
}

/**
 * Writes the adapters in the PEFT layout to `out/adapter` and the merged model (base + adapters, a Loom checkpoint
 * with the tokenizer) to `out/merged`; the adapters are unmerged again after.
 */
export async function saveLoraFiles(
  out: string,
  lora: Lora,
  tokenizer: Tokenizer,
  base: string,
): Promise<void> {
  await saveLoraAdapter(join(out, LORA_DIRS.adapter), lora, base);
  lora.merge();
  try {
    saveCheckpoint(join(out, LORA_DIRS.merged), {
      config: lora.model.config,
      tensors: await tensorsFromTransformer(lora.model),
      tokenizerJson: JSON.stringify(tokenizer.toJSON()),
    });
  } finally {
    lora.unmerge();
  }
}
