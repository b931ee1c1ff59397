import { serverSentEvents } from './sse';

/** An OpenAI-compatible API: its base URL (ending in /v1) and the key it wants ('' for none). */
export interface Endpoint {
  readonly base: string;
  readonly apiKey: string;
}

/** A message of a chat, as the API takes it. */
export interface ApiMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** A chat completion request: the model, the messages and sampling parameters by their API names. */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ApiMessage[];
  /** `temperature`, `top_p`, `max_tokens`, … */
  readonly parameters: Readonly<Record<string, number>>;
}

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

/** What a streamed chat completion gives: text as it comes, then why it ended and the token counts. */
export type ChatStreamEvent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'end'; readonly finishReason: string | null; readonly usage: Usage | undefined };

/** A request the server refused or could not answer; the message is the server's own where it sent one. */
export class ServerError extends Error {
  override readonly name = 'ServerError';
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** The API base of a URL as typed: `http://host:8080` or `…/v1` both give `…/v1`. Throws naming the input. */
export function apiBase(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error(`Server URL: ${JSON.stringify(text)} is not a URL; give one like http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`Server URL: ${JSON.stringify(text)} must start with http:// or https://`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith('/v1') ? path : `${path}/v1`}`;
}

/** The message of an OpenAI error object (`{ error: { message, code } }`), or of any other answer. */
function errorMessage(status: number | 'stream', text: string): string {
  let error: { message?: unknown; code?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  const code = typeof error?.code === 'string' ? ` (${error.code})` : '';
  const message = typeof error?.message === 'string' ? error.message : text.trim().slice(0, 300);
  const hint = status === 401 ? ' — enter the API key the server was started with, and connect again' : '';
  const what = status === 'stream' ? 'Server error during the reply' : `Server error ${status}`;
  return `${what}${code}: ${message || 'no message'}${hint}`;
}

async function call(endpoint: Endpoint, path: string, init: RequestInit): Promise<Response> {
  const url = `${endpoint.base}${path}`;
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  if (endpoint.apiKey !== '') headers.Authorization = `Bearer ${endpoint.apiKey}`;
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ServerError(
      `Could not reach ${url} (${reason}): is the server running, and does it allow this page's origin (CORS)?`,
      undefined,
    );
  }
  if (!response.ok)
    throw new ServerError(errorMessage(response.status, await response.text()), response.status);
  return response;
}

/** The ids of the models the server offers (`GET /v1/models`). */
export async function listModels(endpoint: Endpoint, signal?: AbortSignal): Promise<string[]> {
  const response = await call(endpoint, '/models', { signal });
  const list = (await response.json()) as { data?: { id?: unknown }[] };
  const ids = (list.data ?? []).map((model) => model.id).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) throw new ServerError(`${endpoint.base}/models lists no models`, response.status);
  return ids;
}

interface ChatChunk {
  readonly error?: { readonly message?: string; readonly code?: string };
  readonly choices?: {
    readonly delta?: { readonly content?: string | null };
    readonly finish_reason?: string | null;
  }[];
  readonly usage?: Usage | null;
}

/**
 * Streams a chat completion (`POST /v1/chat/completions` with `stream: true`, usage asked for at the end). An
 * error object sent as an event, after the stream started, is thrown as a ServerError. Aborting `signal` ends the
 * request at once.
 */
export async function* streamChat(
  endpoint: Endpoint,
  request: ChatRequest,
  signal: AbortSignal,
): AsyncGenerator<ChatStreamEvent, void> {
  const { model, messages, parameters } = request;
  const body = { ...parameters, model, messages, stream: true, stream_options: { include_usage: true } };
  const response = await call(endpoint, '/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (response.body === null) throw new ServerError('the server sent no body', response.status);
  let finishReason: string | null = null;
  let usage: Usage | undefined;
  for await (const data of serverSentEvents(response.body)) {
    if (data === '[DONE]') break;
    let chunk: ChatChunk;
    try {
      chunk = JSON.parse(data) as ChatChunk;
    } catch {
      throw new ServerError(
        `the server sent an event that is not JSON: ${data.slice(0, 200)}`,
        response.status,
      );
    }
    if (chunk.error) throw new ServerError(errorMessage('stream', data), response.status);
    const [choice] = chunk.choices ?? [];
    const text = choice?.delta?.content;
    if (text) yield { type: 'text', text };
    finishReason = choice?.finish_reason ?? finishReason;
    usage = chunk.usage ?? usage;
  }
  yield { type: 'end', finishReason, usage };
}
