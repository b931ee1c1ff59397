import { parseArgs as parseNodeArgs } from 'node:util';
import { DEFAULT_WEIGHTS, WEIGHTS_MODES } from '@loom/generate/model-flags';
import type { WeightsMode } from '@loom/models';
import type { ChatTemplateName } from '@loom/tokenizer';

export type BackendName = 'cpu' | 'webgpu';

/** Everything `pnpm serve` was asked for, checked. */
export interface ServeCommand {
  readonly kind: 'serve';
  readonly model: string;
  readonly tokenizer: string | undefined;
  /** `quantized` keeps the file's blocks for the products to read; `f32` widens them. */
  readonly weights: WeightsMode;
  readonly host: string;
  readonly port: number;
  readonly backend: BackendName;
  /** Required as `Authorization: Bearer KEY` when set (`--api-key`, else LOOM_API_KEY). */
  readonly apiKey: string | undefined;
  /** The one origin allowed to call from a browser; CORS is off without it. */
  readonly cors: string | undefined;
  /** The prompt format of chat requests; undefined: chosen from the tokenizer. */
  readonly chatTemplate: ChatTemplateName | undefined;
  /** Sequences decoded together. */
  readonly parallel: number;
  /** Requests that may wait for a free sequence before more are refused with 429. */
  readonly queue: number;
  /** Seconds a request may take, waiting included. */
  readonly timeoutSeconds: number;
}

export type Command = ServeCommand | { readonly kind: 'help' };

export const USAGE = `usage: pnpm serve --model PATH [options]

An OpenAI-compatible API for a Loom model (POST /v1/chat/completions, POST /v1/completions, GET /v1/models,
GET /health, GET /metrics), decoding every request in flight together.

  -m, --model PATH      llama2.c .bin, GGUF, safetensors with config.json, or a Loom checkpoint directory
  --tokenizer PATH      tokenizer file (default: the model's own, or tokenizer.json / tokenizer.bin beside it)
  --weights MODE        quantized (default) keeps a GGUF file's Q8_0 / Q4_0 / Q4_K / Q6_K blocks and F16 / BF16
                        layers as stored, which the products read; f32 widens every weight to float32
  --host HOST           address to listen on (default 127.0.0.1, loopback only)
  --port N              port (default 8080; 0 picks a free one)
  --backend cpu|webgpu  compute backend (default cpu)
  --api-key KEY         require "Authorization: Bearer KEY" (default: the LOOM_API_KEY environment variable)
  --cors ORIGIN         allow browser calls from ORIGIN (default: CORS off)
  --chat-template NAME  plain, llama2 or chatml (default: chatml when the tokenizer has <|im_start|>, else plain)
  --parallel N          sequences decoded together (default 8)
  --queue N             requests waiting beyond those before 429 (default 32)
  --timeout SECONDS     time limit of one request, waiting included (default 300)
  --help                print this`;

/** A bad command line; the message names the flag. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const TEMPLATES: readonly ChatTemplateName[] = ['plain', 'llama2', 'chatml'];

function integer(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`${flag} must be an integer in [${min}, ${max}], got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Parses `pnpm serve` arguments; `env` supplies LOOM_API_KEY. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.model === undefined) throw new UsageError('--model PATH is required');
  const backend = values.backend ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new UsageError(`--backend must be cpu or webgpu, got ${JSON.stringify(backend)}`);
  }
  const weights = WEIGHTS_MODES.find((mode) => mode === (values.weights ?? DEFAULT_WEIGHTS));
  if (weights === undefined) {
    throw new UsageError(
      `--weights must be ${WEIGHTS_MODES.join(' or ')}, got ${JSON.stringify(values.weights)}`,
    );
  }
  const template = values['chat-template'];
  if (template !== undefined && !TEMPLATES.includes(template as ChatTemplateName)) {
    throw new UsageError(
      `--chat-template must be one of ${TEMPLATES.join(', ')}, got ${JSON.stringify(template)}`,
    );
  }
  const apiKey = values['api-key'] ?? env.LOOM_API_KEY;
  if (apiKey === '')
    throw new UsageError('--api-key (or LOOM_API_KEY) is empty; give a key or leave it unset');
  return {
    kind: 'serve',
    model: values.model,
    tokenizer: values.tokenizer,
    weights,
    host: values.host ?? '127.0.0.1',
    port: integer('--port', values.port, 8080, 0, 65_535),
    backend,
    apiKey,
    cors: values.cors,
    chatTemplate: template as ChatTemplateName | undefined,
    parallel: integer('--parallel', values.parallel, 8, 1, 256),
    queue: integer('--queue', values.queue, 32, 0, 100_000),
    timeoutSeconds: integer('--timeout', values.timeout, 300, 1, 86_400),
  };
}

function parse(argv: readonly string[]) {
  return parseNodeArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      model: { type: 'string', short: 'm' },
      tokenizer: { type: 'string' },
      weights: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      backend: { type: 'string' },
      'api-key': { type: 'string' },
      cors: { type: 'string' },
      'chat-template': { type: 'string' },
      parallel: { type: 'string' },
      queue: { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
}
