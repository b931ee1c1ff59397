import { existsSync } from 'node:fs';
import { checkMemoryLimits } from '@loom/kvcache';
import { parseArgs, USAGE, UsageError } from './args';
import { loadServedModel } from './load';
import { CHAT_APP_DIR, LoomServer } from './server';

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let command: ReturnType<typeof parseArgs>;
  try {
    command = parseArgs(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`serve: ${error.message}; see pnpm serve --help\n`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(`${USAGE}\n`);
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
  process.stderr.write(
    `serve: ${served.id} (${served.template} chat template, context ${maxSeqLen}) on ${origin}/v1 ` +
      `— ${command.parallel} sequences decoded together, ${command.queue} more may wait${command.apiKey ? ', API key required' : ''}\n` +
      (existsSync(CHAT_APP_DIR)
        ? `serve: the chat page is at ${origin}/\n`
        : `serve: no chat page at ${origin}/ until it is built: pnpm --filter @loom/chat build\n`),
  );
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  process.stderr.write('serve: stopping; finishing the requests in flight\n');
  await server.close();
  served.model.dispose();
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2), process.env);
} catch (error) {
  process.stderr.write(`serve: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
