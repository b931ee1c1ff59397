import { createInterface, type Interface } from 'node:readline';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describeHeldWeights, openModel } from '@loom/generate/open-model';
import { type ChatSession, type GenerateOptions, TextGenerator } from '@loom/runtime';
import { resolveSamplerConfig, SamplerConfigError } from '@loom/sampler';
import { UsageError } from '../flags';
import type { LoomIo } from '../io';
import { type ChatCommand, parseChatArgs, USAGE } from './args';

type Chatting = Extract<ChatCommand, { kind: 'chat' }>;

const HELP = [
  '/reset          forget the conversation',
  '/system TEXT    set the system message (no TEXT: none) and forget the conversation',
  '/help           this list',
  '/exit           quit (as Ctrl-D, or Ctrl-C at the prompt)',
  'Ctrl-C while a reply streams stops it.',
].join('\n');

/** What one reply ended with, as a note after its text; empty when it ended normally. */
function replyNote(stopReason: string, shifts: number): string {
  const notes = [
    stopReason === 'aborted' ? 'stopped' : '',
    stopReason === 'context-full' ? 'context full; /reset starts over' : '',
    shifts > 0 ? `context shifted ${shifts} time${shifts === 1 ? '' : 's'}` : '',
  ].filter((note) => note !== '');
  return notes.length === 0 ? '' : `[${notes.join('; ')}]\n`;
}

/**
 * The conversation loop: each line is a message (streamed reply) or a /command. Ctrl-C stops a streaming reply;
 * at the prompt it ends the chat (the terminal's Ctrl-C arrives as readline's SIGINT, a pipe's as `io.signal`).
 */
async function converse(
  command: Chatting,
  generator: TextGenerator,
  rl: Interface,
  io: LoomIo,
): Promise<void> {
  let system = command.system;
  const start = () => generator.chat({ template: command.template, system, capacity: command.context });
  let chat: ChatSession = start();
  let reply: AbortController | undefined;
  const interrupt = () => (reply === undefined ? rl.close() : reply.abort());
  rl.on('SIGINT', interrupt);
  io.signal.addEventListener('abort', interrupt);
  const options = (signal: AbortSignal): GenerateOptions => ({
    sampling: command.sampling,
    stop: { maxNewTokens: command.maxTokens, ...(command.ignoreEos ? { eosTokenIds: [] } : {}) },
    contextShift: command.contextShift,
    signal,
  });
  const restart = (note: string) => {
    chat.dispose();
    chat = start();
    io.stdout.write(`[${note}]\n`);
  };
  try {
    rl.prompt();
    for await (const line of rl) {
      const text = line.trim();
      if (text === '/exit' || text === '/quit') break;
      if (text === '/help') io.stdout.write(`${HELP}\n`);
      else if (text === '/reset') restart('conversation cleared');
      else if (text === '/system' || text.startsWith('/system ')) {
        const given = text.slice('/system'.length).trim();
        system = given === '' ? undefined : given;
        restart(
          system === undefined
            ? 'no system message; conversation cleared'
            : 'system message set; conversation cleared',
        );
      } else if (text.startsWith('/')) {
        io.stdout.write(`[unknown command ${text.split(/\s/)[0]}; /help lists the commands]\n`);
      } else if (text !== '') {
        reply = new AbortController();
        try {
          for await (const event of chat.send(text, options(reply.signal))) {
            if (event.type === 'dropped') {
              io.stdout.write(
                `[dropped the ${event.turns} oldest turn${event.turns === 1 ? '' : 's'} to make room]\n`,
              );
              continue;
            }
            io.stdout.write(event.text);
            await nextTurn(); // lets the terminal's keys (Ctrl-C) in between tokens
            if (event.type === 'done') {
              io.stdout.write(`\n${replyNote(event.stats.stopReason, event.stats.contextShifts ?? 0)}`);
            }
          }
        } finally {
          reply = undefined;
        }
        if (io.signal.aborted) break;
      }
      rl.prompt();
    }
  } finally {
    rl.off('SIGINT', interrupt);
    io.signal.removeEventListener('abort', interrupt);
    chat.dispose();
  }
}

/** Runs `loom chat`; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: LoomIo): Promise<number> {
  let command: ChatCommand;
  try {
    command = parseChatArgs(argv);
    if (command.kind === 'chat') resolveSamplerConfig(command.sampling);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof SamplerConfigError)) throw error;
    const flag =
      error instanceof SamplerConfigError
        ? `--${error.field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: `
        : '';
    io.stderr.write(`chat: ${flag}${error.message}; see loom chat --help\n`);
    return 2;
  }
  if (command.kind === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const { model, tokenizer, limits, weights } = await openModel(command, io.env);
    try {
      const generator = new TextGenerator(model, tokenizer, { limits });
      const rl = createInterface({ input: io.stdin, output: io.stdout, prompt: '> ' });
      io.stdout.write(
        `loom chat: ${command.model}, ${command.template} template, ${describeHeldWeights(weights)}; ` +
          '/help lists the commands, Ctrl-C stops a reply\n',
      );
      try {
        await converse(command, generator, rl, io);
      } finally {
        rl.close();
      }
    } finally {
      model.dispose();
    }
    return 0;
  } catch (error) {
    io.stderr.write(`chat: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
