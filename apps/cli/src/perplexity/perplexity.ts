import { describeHeldWeights, openModel } from '@loom/generate/open-model';
import { readUserFile } from '@loom/generate/paths';
import { encodePrompt, perplexity } from '@loom/runtime';
import { UsageError } from '../flags';
import type { LoomIo } from '../io';
import { type PerplexityCommand, parsePerplexityArgs, USAGE } from './args';

type Scoring = Extract<PerplexityCommand, { kind: 'perplexity' }>;

async function score(command: Scoring, io: LoomIo): Promise<void> {
  const bytes = readUserFile('FILE', command.file, io.env);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${command.file}: not UTF-8 text; loom perplexity scores a UTF-8 text file`);
  }
  const opened = await openModel(command, io.env);
  try {
    const tokens = encodePrompt(opened.tokenizer, text);
    const { maxSeqLen } = opened.model.config;
    if (command.context !== undefined && command.context > maxSeqLen) {
      throw new UsageError(
        `--context: ${command.context} is more than the model's context length ${maxSeqLen}`,
      );
    }
    const started = performance.now();
    const result = await perplexity(opened.model, tokens, {
      context: command.context,
      stride: command.stride,
    });
    const seconds = (performance.now() - started) / 1000;
    if (command.json) {
      io.stdout.write(
        `${JSON.stringify({ model: command.model, file: command.file, ...result, weights: opened.weights, seconds })}\n`,
      );
      return;
    }
    io.stdout.write(
      `perplexity ${result.perplexity.toFixed(4)} over ${result.scored} tokens of ${command.file} ` +
        `(mean NLL ${result.meanNll.toFixed(4)} nats; context ${result.context}, stride ${result.stride}, ` +
        `${result.windows} windows, ${seconds.toFixed(1)} s; ${describeHeldWeights(opened.weights)})\n`,
    );
  } finally {
    opened.model.dispose();
  }
}

/** Runs `loom perplexity`; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: LoomIo): Promise<number> {
  try {
    const command = parsePerplexityArgs(argv);
    if (command.kind === 'help') io.stdout.write(`${USAGE}\n`);
    else await score(command, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof UsageError;
    io.stderr.write(`perplexity: ${message}${usage ? '; see loom perplexity --help' : ''}\n`);
    return usage ? 2 : 1;
  }
}
