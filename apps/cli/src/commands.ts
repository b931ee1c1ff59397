import { baseDir, type LoomIo } from './io';

/** One `loom` subcommand: a line for `loom --help`, and how to run it in this process. */
interface LoomCommand {
  readonly summary: string;
  /** Printed on stderr at the first Ctrl-C, when the command does something about it. */
  readonly onInterrupt?: string;
  /** Runs the command with the arguments after its name; resolves to the exit status. */
  readonly run: (argv: readonly string[], io: LoomIo) => Promise<number>;
}

/** Writes text to a stream; the apps take such functions. */
const writer = (stream: NodeJS.WritableStream) => (text: string) => {
  stream.write(text);
};

/** Every command, in the order `loom --help` lists them; each app is loaded only when its command runs. */
export const COMMANDS: Readonly<Record<string, LoomCommand>> = {
  train: {
    summary: 'train a small model on a text file (no flags: a demo run on generated stories)',
    onInterrupt: 'stopping after this step to save a checkpoint (Ctrl-C again quits at once)',
    run: async (argv, io) => {
      const { main } = await import('@loom/trainer/cli');
      return main(argv, io, { baseDir: baseDir(io.env), signal: io.signal });
    },
  },
  generate: {
    summary: 'continue a prompt with a model, streaming the text',
    run: async (argv, io) => {
      const { main } = await import('@loom/generate/cli');
      return main(argv, {
        stdout: writer(io.stdout),
        stderr: writer(io.stderr),
        env: io.env,
        signal: io.signal,
      });
    },
  },
  chat: {
    summary: 'talk with a model in the terminal (/reset, /system, Ctrl-C stops a reply)',
    run: async (argv, io) => (await import('./chat/chat')).main(argv, io),
  },
  tokenize: {
    summary: 'encode text to token ids, decode ids, or train a byte-level BPE',
    run: async (argv, io) => {
      const { main } = await import('@loom/tokenizer/cli');
      const program = 'loom tokenize';
      return main(argv, { stdout: writer(io.stdout), stderr: writer(io.stderr), env: io.env, program });
    },
  },
  bench: {
    summary: 'run a benchmark suite and print its table',
    run: async (argv, io) => {
      const { main } = await import('@loom/bench/cli');
      return main(argv, { stdout: writer(io.stdout), stderr: writer(io.stderr) });
    },
  },
  serve: {
    summary: 'serve a model over an OpenAI-compatible HTTP API (and the chat page), until Ctrl-C',
    onInterrupt: 'stopping: finishing the requests in flight (Ctrl-C again quits at once)',
    run: async (argv, io) => {
      const { main } = await import('@loom/server/cli');
      return main(argv, {
        stdout: writer(io.stdout),
        stderr: writer(io.stderr),
        env: io.env,
        signal: io.signal,
      });
    },
  },
  convert: {
    summary: 'convert a model between llama2.c .bin, Loom checkpoints, Hugging Face safetensors and GGUF',
    run: async (argv, io) => (await import('./convert/convert')).main(argv, io),
  },
  quantize: {
    summary: 'write a model as GGUF with its matrices in Q8_0, Q4_0, Q4_K or Q6_K',
    run: async (argv, io) => (await import('./quantize/quantize')).main(argv, io),
  },
  perplexity: {
    summary: 'score a text file with a model: perplexity over sliding windows',
    run: async (argv, io) => (await import('./perplexity/perplexity')).main(argv, io),
  },
  seq2seq: {
    summary: 'train an encoder–decoder on a generated string task (reverse, sort) and report exact-match',
    run: async (argv, io) => (await import('./seq2seq/seq2seq')).main(argv, io),
  },
};
