import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SamplerConfigError } from '@loom/sampler';
import { checkApiKey, setCorsHeaders } from './access';
import { ApiError } from './api-error';
import { Batcher, type SequenceListener } from './batcher';
import type { Body } from './fields';
import { endEvents, readBody, sendError, sendEvent, sendJson, startEvents } from './http-io';
import type { ServedModel } from './load';
import { Metrics } from './metrics';
import { ResponseBuilder } from './openai-format';
import {
  type ModelInfo,
  type ParsedRequest,
  parseBody,
  parseChatRequest,
  parseCompletionRequest,
} from './parse-request';
import { type StaticSite, sendStaticFile } from './static-files';

/** The chat app's build folder (`pnpm --filter @loom/chat build`), served at `/` by default. */
export const CHAT_APP_DIR = fileURLToPath(new URL('../../chat/dist', import.meta.url));

export interface ServerOptions {
  /** Required as `Authorization: Bearer KEY` on every route but /health when set. */
  readonly apiKey?: string;
  /** The origin browsers may call from; CORS is off without it. */
  readonly cors?: string;
  /** Sequences decoded together (default 8). */
  readonly parallel?: number;
  /** Requests that may wait beyond those (default 32); more get 429. */
  readonly queue?: number;
  /** Time limit of one request in milliseconds, waiting included (default 300 000). */
  readonly timeoutMs?: number;
  /** Largest request body in bytes (default 1 MiB); larger ones get 413. */
  readonly maxBodyBytes?: number;
  /** Prompt tokens of one sequence per batched step (default 32). */
  readonly prefillChunk?: number;
  /** The folder of static files served at `/` and every path outside the API (default `CHAT_APP_DIR`). */
  readonly appDir?: string;
}

/** What a path answers: a generation for the POST routes, a plain response for the GET ones. */
type Route =
  | { readonly method: 'POST'; readonly parse: (body: Body, info: ModelInfo) => ParsedRequest }
  | { readonly method: 'GET'; readonly respond: (res: ServerResponse) => void };

const notFound = (path: string) =>
  new ApiError(
    404,
    'not_found_error',
    'not_found',
    `no route ${path}; see /v1/chat/completions, /v1/completions, /v1/models, /health, /metrics`,
  );

/**
 * The OpenAI-compatible HTTP API of one model on `node:http`: chat completions and completions (whole or as
 * server-sent events), the model list, a health check and Prometheus metrics. Generation goes through a `Batcher`,
 * so every request in flight is decoded in the same forward passes.
 */
export class LoomServer {
  readonly http: Server;
  readonly metrics = new Metrics();
  readonly batcher: Batcher;
  readonly #info: ModelInfo;
  readonly #maxBody: number;
  readonly #site: StaticSite;

  constructor(
    readonly served: ServedModel,
    readonly options: ServerOptions = {},
  ) {
    this.batcher = new Batcher(
      served.model,
      served.tokenizer,
      {
        parallel: options.parallel ?? 8,
        queue: options.queue ?? 32,
        timeoutMs: options.timeoutMs ?? 300_000,
        prefillChunk: options.prefillChunk,
      },
      this.metrics,
    );
    const { id, tokenizer, template, model } = served;
    this.#info = { id, tokenizer, template, maxSeqLen: model.config.maxSeqLen };
    this.#maxBody = options.maxBodyBytes ?? 1 << 20;
    const root = options.appDir ?? CHAT_APP_DIR;
    this.#site = {
      root,
      missing: `the chat app is not built (no ${root}); run pnpm --filter @loom/chat build, then reload`,
    };
    this.http = createServer((req, res) => void this.#handle(req, res));
    this.http.on('clientError', (_error, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
  }

  /** Starts listening; resolves with the address (port 0 picks a free port). */
  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, host, () => {
        this.http.off('error', reject);
        resolve(this.http.address() as AddressInfo);
      });
    });
  }

  /** Stops accepting connections and waits for the requests in flight. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.http.closeIdleConnections();
    await this.batcher.idle();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    res.on('finish', () => this.metrics.request(routeLabel(path), res.statusCode));
    setCorsHeaders(req, res, this.options.cors);
    let bodyUnread = req.method === 'POST';
    try {
      if (req.method === 'OPTIONS' && this.options.cors !== undefined) {
        res.writeHead(204).end();
        return;
      }
      if (!isApiPath(path)) {
        await sendStaticFile(req, res, this.#site);
        return;
      }
      const route = this.#route(path);
      if (req.method !== route.method) {
        throw new ApiError(
          405,
          'invalid_request_error',
          'method_not_allowed',
          `${req.method} ${path} is not allowed; use ${route.method}`,
          null,
          {
            Allow: route.method,
          },
        );
      }
      if (path !== '/health') checkApiKey(req, this.options.apiKey);
      if (route.method === 'GET') {
        route.respond(res);
        return;
      }
      const text = await readBody(req, this.#maxBody);
      bodyUnread = false;
      await this.#generate(res, route.parse(parseBody(text), this.#info));
    } catch (error) {
      sendError(res, toApiError(error), bodyUnread);
    }
  }

  #route(path: string): Route {
    switch (path) {
      case '/v1/chat/completions':
        return { method: 'POST', parse: parseChatRequest };
      case '/v1/completions':
        return { method: 'POST', parse: parseCompletionRequest };
      case '/v1/models':
        return {
          method: 'GET',
          respond: (res) => sendJson(res, 200, { object: 'list', data: [this.#modelObject()] }),
        };
      case '/health':
        return {
          method: 'GET',
          respond: (res) =>
            sendJson(res, 200, {
              status: 'ok',
              model: this.served.id,
              running: this.batcher.running,
              waiting: this.batcher.waiting,
            }),
        };
      case '/metrics':
        return {
          method: 'GET',
          respond: (res) => {
            const text = this.metrics.render({
              waiting: this.batcher.waiting,
              running: this.batcher.running,
            });
            res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(text);
          },
        };
    }
    if (!path.startsWith('/v1/models/')) throw notFound(path);
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    return {
      method: 'GET',
      respond: (res) => {
        if (id !== this.served.id) {
          throw new ApiError(
            404,
            'not_found_error',
            'model_not_found',
            `the model ${JSON.stringify(id)} does not exist here; this server has ${JSON.stringify(this.served.id)}`,
            'model',
          );
        }
        sendJson(res, 200, this.#modelObject());
      },
    };
  }

  #modelObject() {
    return { id: this.served.id, object: 'model', created: 0, owned_by: 'loom' };
  }

  /** Runs a generation through the batcher and answers it, whole or streamed; a client leaving cancels it. */
  #generate(res: ServerResponse, request: ParsedRequest): Promise<void> {
    const builder = new ResponseBuilder(request, this.served.id, this.served.tokenizer);
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    return new Promise((resolve) => {
      const settle = (send: () => void) => {
        send();
        resolve();
      };
      const listener: SequenceListener = request.stream
        ? {
            token: (step) => {
              const chunk = builder.push(step);
              if (chunk !== undefined) sendEvent(res, chunk);
            },
            done: (finish) =>
              settle(() => {
                sendEvent(res, builder.finishChunk(finish));
                if (request.includeUsage) sendEvent(res, builder.usageChunk(finish));
                endEvents(res);
              }),
            fail: (error) => settle(() => sendError(res, error)),
          }
        : {
            token: (step) => void builder.push(step),
            done: (finish) => settle(() => sendJson(res, 200, builder.complete(finish))),
            fail: (error) => settle(() => sendError(res, error)),
          };
      this.batcher.submit(request.generation, listener, controller.signal);
      if (request.stream) {
        startEvents(res);
        if (request.kind === 'chat') sendEvent(res, builder.roleChunk());
      }
      controller.signal.addEventListener('abort', () => resolve());
    });
  }
}

const ROUTES = new Set(['/v1/chat/completions', '/v1/completions', '/v1/models', '/health', '/metrics']);

/** The API's paths; every other one names a static file of the app. */
const isApiPath = (path: string) => ROUTES.has(path) || path === '/v1' || path.startsWith('/v1/');

/** The metrics label of a path: one per route, so unknown paths cannot grow the label set. */
function routeLabel(path: string): string {
  if (ROUTES.has(path)) return path;
  if (!isApiPath(path)) return 'static';
  return path.startsWith('/v1/models/') ? '/v1/models/{id}' : 'other';
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof SamplerConfigError) {
    return new ApiError(400, 'invalid_request_error', 'invalid_value', error.message, error.field);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ApiError(500, 'server_error', 'internal_error', `the server failed: ${message}`);
}
