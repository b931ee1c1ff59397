import { existsSync } from 'node:fs';
import { checkMemoryLimits } from '@loom/kvcache';
import { parseArgs, USAGE, UsageError } from './args';
import { loadServedModel } from './load';
import { CHAT_APP_DIR, LoomServer } from './server';

/** What `serve` writes to and stops on: the process's, or those of the `loom` command. */
export interface ServeIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted to stop serving (Ctrl-C): the requests in flight are finished first. */
  readonly signal: AbortSignal;
}

/** `pnpm serve` / `loom serve`: loads the model, serves until `io.signal` is aborted; resolves to the exit status. */
export async function main(argv: readonly string[], io: ServeIo): Promise<number> {
  const { env } = io;
  let command: ReturnType<typeof parseArgs>;
  try {
    command = parseArgs(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`serve: ${error.message}; see pnpm serve --help\n`);
    return 2;
  }
  if (command.kind === 'help') {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const served = await loadServedModel(command, env);
  const { maxSeqLen } = served.model.config;
  // Every running sequence may hold a full context.
  checkMemoryLimits(served.model.config, command.parallel * maxSeqLen, {
    totalBytes: served.limits.totalBytes,
  });
  const server = new LoomServer(served, {
    apiKey: command.apiKey,
    cors: command.cors,
    parallel: command.parallel,
    queue: command.queue,
    timeoutMs: command.timeoutSeconds * 1000,
  });
  const address = await server.listen(command.port, command.host);
  const origin = `http://${address.address}:${address.port}`;
  io.stderr(
    `serve: ${served.id} (${served.template} chat template, context ${maxSeqLen}) on ${origin}/v1 ` +
      `— ${command.parallel} sequences decoded together, ${command.queue} more may wait${command.apiKey ? ', API key required' : ''}\n` +
      (existsSync(CHAT_APP_DIR)
        ? `serve: the chat page is at ${origin}/\n`
        : `serve: no chat page at ${origin}/ until it is built: pnpm --filter @loom/chat build\n`),
  );
  if (!io.signal.aborted) {
    await new Promise<void>((resolve) =>
      io.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
  }
  io.stderr('serve: stopping; finishing the requests in flight\n');
  await server.close();
  served.model.dispose();
  return 0;
}
