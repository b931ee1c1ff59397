import {
  type GenerateOptions,
  type GenerationEvent,
  type GenerationStats,
  MemoryLimitError,
  RecurrentGenerator,
  TextGenerator,
} from '@loom/runtime';
import { SamplerConfigError } from '@loom/sampler';
import type { Tokenizer } from '@loom/tokenizer';
import { type Command, parseArgs, USAGE, UsageError } from './args';
import { contextFor, contextTooLarge, maxSeqLenSource } from './context';
import { mambaCheckpointDir, openMamba } from './open-mamba';
import { describeHeldWeights, type HeldWeights, openModel } from './open-model';
import { existingUserPath } from './paths';

/** Where the CLI writes, and the environment it reads (INIT_CWD). */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Cancels the generation (Ctrl-C); it then ends with the stop reason `aborted`. */
  readonly signal?: AbortSignal;
}

type GenerateCommand = Extract<Command, { kind: 'generate' }>;

/** The command-line flag of each sampler and stop setting, for error messages. */
const FLAG_OF: Readonly<Record<string, string>> = {
  temperature: '--temperature',
  topK: '--top-k',
  topP: '--top-p',
  minP: '--min-p',
  repetitionPenalty: '--repetition-penalty',
  seed: '--seed',
  maxNewTokens: '--max-tokens',
  stopStrings: '--stop',
};

function summary(stats: GenerationStats, weights: HeldWeights | undefined): string {
  const t = stats.timings;
  const prefilled = stats.promptTokens.length - stats.reusedTokens;
  const shifts = stats.contextShifts ?? 0;
  const shifted = shifts === 0 ? '' : `, ${shifts} context shift${shifts === 1 ? '' : 's'}`;
  return (
    `${stats.tokens.length} tokens, stop: ${stats.stopReason}${shifted}; prefill ${prefilled} tokens at ` +
    `${t.prefillTokensPerSecond.toFixed(1)} tok/s, decode ${t.decodeTokensPerSecond.toFixed(1)} tok/s, ` +
    `first token after ${t.timeToFirstTokenMs.toFixed(1)} ms` +
    (weights === undefined ? '' : `; ${describeHeldWeights(weights)}`)
  );
}

/** The sampling and stop settings of the command line, with the seed it resolved to. */
function generateOptions(command: GenerateCommand, seed: number, io: CliIo): GenerateOptions {
  return {
    sampling: {
      temperature: command.temperature,
      topK: command.topK,
      topP: command.topP,
      minP: command.minP,
      repetitionPenalty: command.repetitionPenalty,
      seed,
    },
    stop: { maxNewTokens: command.maxTokens, stopStrings: command.stop },
    signal: io.signal,
  };
}

async function generate(command: GenerateCommand, io: CliIo): Promise<void> {
  const mambaDir = mambaCheckpointDir(existingUserPath('--model', command.model, io.env));
  if (mambaDir !== undefined) return generateRecurrent(command, io, mambaDir);
  const { modelPath, loaded, model, tokenizer, limits, weights } = await openModel(command, io.env);
  const generator = new TextGenerator(model, tokenizer, { limits });
  const seed = command.seed ?? Date.now() % 2 ** 31;
  const prompt = generator.encode(command.prompt);
  const { maxSeqLen } = model.config;
  const source = maxSeqLenSource(loaded, modelPath);
  let events: ReturnType<TextGenerator['generate']>;
  try {
    events = generator.generate(prompt, {
      ...generateOptions(command, seed, io),
      contextShift: command.contextShift,
      context: contextFor(command, prompt.length, maxSeqLen, source),
    });
  } catch (error) {
    model.dispose();
    if (!(error instanceof MemoryLimitError)) throw error;
    throw contextTooLarge(error, command, prompt.length, maxSeqLen, source);
  }
  try {
    await print(command, io, tokenizer, prompt, seed, events, weights);
  } finally {
    model.dispose();
  }
}

/** Generates from a Mamba checkpoint with its fixed-size state (no KV cache, so no --context to size). */
async function generateRecurrent(command: GenerateCommand, io: CliIo, dir: string): Promise<void> {
  if (command.context !== undefined) {
    throw new UsageError(
      `--context: ${command.model} is a Mamba model, whose state has a fixed size; it takes no context to size — leave --context out`,
    );
  }
  const { model, tokenizer } = await openMamba(command, dir, io.env);
  try {
    const generator = new RecurrentGenerator(model, tokenizer);
    const seed = command.seed ?? Date.now() % 2 ** 31;
    const prompt = generator.encode(command.prompt);
    await print(
      command,
      io,
      tokenizer,
      prompt,
      seed,
      generator.generate(prompt, generateOptions(command, seed, io)),
    );
  } finally {
    model.dispose();
  }
}

/**
 * Streams the text (prompt first) and a summary on stderr, or with --json one JSON object; `weights` says what a
 * transformer's layers read (a Mamba model holds f32 weights only, and has none).
 */
async function print(
  command: GenerateCommand,
  io: CliIo,
  tokenizer: Tokenizer,
  prompt: readonly number[],
  seed: number,
  events: AsyncGenerator<GenerationEvent, void>,
  weights?: HeldWeights,
): Promise<void> {
  if (!command.json) io.stdout(tokenizer.decode(prompt));
  for await (const event of events) {
    if (!command.json) io.stdout(event.text);
    if (event.type !== 'done') continue;
    const { stats } = event;
    if (!command.json) {
      io.stdout('\n');
      io.stderr(`${summary(stats, weights)}\n`);
      continue;
    }
    const result = {
      prompt: command.prompt,
      promptTokens: stats.promptTokens,
      tokens: stats.tokens,
      text: stats.text,
      stopReason: stats.stopReason,
      contextShifts: stats.contextShifts ?? 0,
      seed,
      backend: command.backend,
      ...(weights === undefined ? {} : { weights }),
      timings: stats.timings,
    };
    io.stdout(`${JSON.stringify(result)}\n`);
  }
}

/** Runs `loom generate` with these arguments; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = parseArgs(argv);
    if (command.kind === 'help') {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    await generate(command, io);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`generate: ${error.message}; see loom generate --help\n`);
      return 2;
    }
    if (error instanceof SamplerConfigError) {
      io.stderr(`generate: ${FLAG_OF[error.field] ?? error.field}: ${error.message}\n`);
      return 2;
    }
    io.stderr(`generate: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
