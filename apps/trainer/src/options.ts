import type { Preset } from '@loom/nn';
import { ARCH_OBJECTIVES, type ArchName, type Objective } from './arch/names';

export type BackendName = 'cpu' | 'webgpu';
export type TokenizerChoice = 'char' | 'bpe';
/** What a step with a non-finite loss or gradient norm does: end the run, or drop the update and go on. */
export type NonFinitePolicy = 'stop' | 'skip';

export const PRESETS: readonly Preset[] = ['gpt2', 'llama'];
export const BACKENDS: readonly BackendName[] = ['cpu', 'webgpu'];
export const TOKENIZERS: readonly TokenizerChoice[] = ['char', 'bpe'];
export const NONFINITE_POLICIES: readonly NonFinitePolicy[] = ['stop', 'skip'];

/** Everything a training run is configured by; paths are absolute. */
export interface TrainOptions {
  /** UTF-8 text to train on; undefined trains on the generated short stories. */
  readonly data: string | undefined;
  readonly tokenizer: TokenizerChoice;
  /** Model family: decoder-only (TransformerLM) or encoder-only (TransformerEncoder). */
  readonly arch: ArchName;
  /** What the model learns; one of ARCH_OBJECTIVES[arch]. */
  readonly objective: Objective;
  /** Vocabulary size of a BPE tokenizer (ignored by char). */
  readonly vocabSize: number;
  readonly preset: Preset;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly dim: number;
  /** Context length: tokens per training sequence. */
  readonly block: number;
  /** Sequences per micro-batch. */
  readonly batch: number;
  /** Micro-batches whose gradients are averaged into one update. */
  readonly gradAccum: number;
  readonly lr: number;
  readonly minLr: number;
  readonly warmup: number;
  readonly iters: number;
  readonly weightDecay: number;
  readonly beta1: number;
  readonly beta2: number;
  /** Maximum global gradient norm; 0 turns clipping off. */
  readonly clip: number;
  readonly dropout: number;
  readonly seed: number;
  readonly backend: BackendName;
  /** Steps between evaluations (0: only at the end). */
  readonly evalEvery: number;
  readonly evalBatches: number;
  /** Steps between checkpoints (0: only at the end). */
  readonly ckptEvery: number;
  readonly out: string;
  /** Checkpoint directory to continue from. */
  readonly resume: string | undefined;
  /**
   * A model to start from instead of fresh weights (a Loom checkpoint directory, a safetensors model with its
   * config.json, a llama2.c .bin); its config replaces the model-shape options.
   */
  readonly initFrom: string | undefined;
  /** The --init-from model's tokenizer when it holds none (a llama2.c .bin): tokenizer.json or llama2.c tokenizer.bin. */
  readonly initTokenizer: string | undefined;
  /** Rank of LoRA adapters trained on the frozen model; 0 trains every weight. */
  readonly loraRank: number;
  /** LoRA scale numerator (updates scaled by alpha / rank); undefined: the rank. */
  readonly loraAlpha: number | undefined;
  /** Dropout on each adapter's input. */
  readonly loraDropout: number;
  /** Comma-separated modules to adapt (PEFT names, or Loom's wq, wk, wv, wo, w1, w2, w3); undefined: PEFT's default. */
  readonly loraTargets: string | undefined;
  readonly onNonfinite: NonFinitePolicy;
  /** Most updates `onNonfinite: 'skip'` may drop over the whole run; one more fails it. */
  readonly maxSkippedSteps: number;
  readonly sampleTokens: number;
  /** 0 samples greedily. */
  readonly temperature: number;
  /** Start of the sample; undefined picks one that suits the data. */
  readonly prompt: string | undefined;
}

/** Options as given on a command line: any subset. */
export type GivenOptions = Partial<TrainOptions>;

/**
 * The defaults: a small gpt2 (4 layers, dim 96, 459k parameters) with a high learning rate,
 * which learns the generated stories to a validation loss of about 0.27 in 800 steps — about
 * 80 seconds on two CPU cores (the `pnpm start` demo).
 */
export function defaultOptions(out: string): TrainOptions {
  return {
    data: undefined,
    tokenizer: 'char',
    arch: 'decoder',
    objective: 'clm',
    vocabSize: 512,
    preset: 'gpt2',
    layers: 4,
    heads: 4,
    kvHeads: 4,
    dim: 96,
    block: 64,
    batch: 16,
    gradAccum: 1,
    lr: 5e-3,
    minLr: 5e-4,
    warmup: 50,
    iters: 800,
    weightDecay: 0.1,
    beta1: 0.9,
    beta2: 0.99,
    clip: 1,
    dropout: 0,
    seed: 1337,
    backend: 'cpu',
    evalEvery: 200,
    evalBatches: 20,
    ckptEvery: 0,
    out,
    resume: undefined,
    initFrom: undefined,
    initTokenizer: undefined,
    loraRank: 0,
    loraAlpha: undefined,
    loraDropout: 0,
    loraTargets: undefined,
    onNonfinite: 'stop',
    maxSkippedSteps: 10,
    sampleTokens: 300,
    temperature: 0.8,
    prompt: undefined,
  };
}

/** A configuration that cannot run; the message lists every problem. */
export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

/** Problems that involve more than one option (each flag's own range is checked when it is parsed). */
function optionProblems(o: TrainOptions): string[] {
  const problems: string[] = [];
  if (o.dim % o.heads !== 0) problems.push(`--dim ${o.dim} must be a multiple of --heads ${o.heads}`);
  if (o.heads % o.kvHeads !== 0) problems.push(`--kv-heads ${o.kvHeads} must divide --heads ${o.heads}`);
  if (o.preset === 'gpt2' && o.kvHeads !== o.heads) {
    problems.push(
      `--kv-heads ${o.kvHeads}: gpt2 has no grouped-query attention; use --preset llama or drop --kv-heads`,
    );
  }
  if (o.preset === 'llama' && o.dim % o.heads === 0 && (o.dim / o.heads) % 2 !== 0) {
    problems.push(`llama's RoPE needs an even head size; --dim ${o.dim} / --heads ${o.heads} is odd`);
  }
  const objectives = ARCH_OBJECTIVES[o.arch];
  if (!objectives.includes(o.objective)) {
    problems.push(`--objective ${o.objective}: --arch ${o.arch} trains ${objectives.join(' or ')}`);
  }
  if (o.loraRank === 0 && (o.loraAlpha !== undefined || o.loraDropout > 0 || o.loraTargets !== undefined)) {
    problems.push('--lora-alpha, --lora-dropout and --lora-targets need --lora-rank');
  }
  if (o.loraRank > 0 && o.arch !== 'decoder')
    problems.push(`--lora-rank: LoRA trains a decoder, not --arch ${o.arch}`);
  if (o.initFrom !== undefined && o.arch !== 'decoder') {
    problems.push(`--init-from: starts a decoder from a checkpoint, not --arch ${o.arch}`);
  }
  if (o.initTokenizer !== undefined && o.initFrom === undefined)
    problems.push('--init-tokenizer needs --init-from');
  if (o.loraRank > 0 && o.resume !== undefined) {
    problems.push('--resume: a LoRA run cannot be resumed yet; start it again with --init-from');
  }
  if (o.minLr > o.lr) problems.push(`--min-lr ${o.minLr} must not exceed --lr ${o.lr}`);
  if (o.tokenizer === 'bpe' && o.vocabSize < 257) {
    problems.push(
      `--vocab-size ${o.vocabSize}: a byte-level BPE needs at least 257 (256 bytes + <|endoftext|>)`,
    );
  }
  return problems;
}

/** Throws an OptionsError listing every problem of `o`. */
export function validateOptions(o: TrainOptions): TrainOptions {
  const problems = optionProblems(o);
  if (problems.length > 0) throw new OptionsError(`invalid options:\n  ${problems.join('\n  ')}`);
  return o;
}
