import { basename } from 'node:path';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { type GenerationStats, MemoryLimitError, TextGenerator } from '@loom/runtime';
import { SamplerConfigError } from '@loom/sampler';
import { setBackend } from '@loom/tensor';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import { type Command, parseArgs, USAGE, UsageError } from './args';
import { createBackend } from './backend';
import { contextFor, contextTooLarge, maxSeqLenSource } from './context';
import { existingUserPath, readUserFile, tokenizerBeside } from './paths';

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

function openTokenizer(
  command: GenerateCommand,
  modelPath: string,
  modelTokenizerJson: string | undefined,
  io: CliIo,
): Tokenizer {
  if (command.tokenizer !== undefined) {
    return loadTokenizer(readUserFile('--tokenizer', command.tokenizer, io.env), basename(command.tokenizer));
  }
  if (modelTokenizerJson !== undefined) {
    return loadTokenizer(new TextEncoder().encode(modelTokenizerJson), `${command.model} (tokenizer.json)`);
  }
  const beside = tokenizerBeside(modelPath);
  if (beside === undefined) {
    throw new Error(
      `--tokenizer: not given, and there is no tokenizer.json or tokenizer.bin beside ${command.model}; ` +
        'pass --tokenizer PATH (stories260K.bin uses tok512.bin)',
    );
  }
  return loadTokenizer(readUserFile('--tokenizer', beside, io.env), basename(beside));
}

function summary(stats: GenerationStats): string {
  const t = stats.timings;
  const prefilled = stats.promptTokens.length - stats.reusedTokens;
  return (
    `${stats.tokens.length} tokens, stop: ${stats.stopReason}; prefill ${prefilled} tokens at ` +
    `${t.prefillTokensPerSecond.toFixed(1)} tok/s, decode ${t.decodeTokensPerSecond.toFixed(1)} tok/s, ` +
    `first token after ${t.timeToFirstTokenMs.toFixed(1)} ms`
  );
}

async function generate(command: GenerateCommand, io: CliIo): Promise<void> {
  const modelPath = existingUserPath('--model', command.model, io.env);
  const loaded = loadModelFile(modelPath);
  const tokenizer = openTokenizer(command, modelPath, loaded.tokenizerJson, io);
  const { backend, limits } = await createBackend(command.backend);
  setBackend(backend);
  const model = transformerFromTensors(loaded, command.model);
  const generator = new TextGenerator(model, tokenizer, { limits });
  const seed = command.seed ?? Date.now() % 2 ** 31;
  const prompt = generator.encode(command.prompt);
  const { maxSeqLen } = model.config;
  const source = maxSeqLenSource(loaded, modelPath);
  let events: ReturnType<TextGenerator['generate']>;
  try {
    events = generator.generate(prompt, {
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
      context: contextFor(command, prompt.length, maxSeqLen, source),
    });
  } catch (error) {
    model.dispose();
    if (!(error instanceof MemoryLimitError)) throw error;
    throw contextTooLarge(error, command, prompt.length, maxSeqLen, source);
  }
  if (!command.json) io.stdout(tokenizer.decode(prompt));
  for await (const event of events) {
    if (!command.json) io.stdout(event.text);
    if (event.type !== 'done') continue;
    const { stats } = event;
    if (!command.json) {
      io.stdout('\n');
      io.stderr(`${summary(stats)}\n`);
      continue;
    }
    const result = {
      prompt: command.prompt,
      promptTokens: stats.promptTokens,
      tokens: stats.tokens,
      text: stats.text,
      stopReason: stats.stopReason,
      seed,
      backend: command.backend,
      timings: stats.timings,
    };
    io.stdout(`${JSON.stringify(result)}\n`);
  }
  model.dispose();
}

/** Runs `pnpm generate` with these arguments; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
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
      io.stderr(`generate: ${error.message}\n\n${USAGE}\n`);
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
