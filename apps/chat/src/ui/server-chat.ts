import { signal } from '@preact/signals';
import { type ApiMessage, apiBase, listModels, streamChat, type Usage } from '../server/openai-api';
import { openaiParameters, type Settings } from '../settings';
import { beginReply, finishReply } from './reply';
import * as state from './state';

/** The server URL and API key as typed; the URL is the page's own origin when `pnpm serve` served it. */
export const serverUrl = signal('http://127.0.0.1:8080');
export const apiKey = signal('');
export const connecting = signal(false);

/** The reply streaming from the server, and its times (performance.now() ms) for the figures. */
interface Running {
  readonly controller: AbortController;
  readonly started: number;
  first?: number;
  last?: number;
  chunks: number;
}
let running: Running | undefined;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Lists the server's models; the chat talks to it from then on. The server's error is shown if it refuses. */
export async function connect(): Promise<void> {
  state.error.value = undefined;
  connecting.value = true;
  try {
    const endpoint = { base: apiBase(serverUrl.value), apiKey: apiKey.value.trim() };
    const models = await listModels(endpoint);
    stopServer();
    state.server.value = { endpoint, models, model: models[0] };
  } catch (error) {
    state.error.value = errorText(error);
  } finally {
    connecting.value = false;
  }
}

/** Back to the model in this page's worker. */
export function disconnect(): void {
  stopServer();
  state.server.value = undefined;
  state.serverStats.value = undefined;
}

/** Connects to the page's own origin when it is a Loom server (`pnpm serve`: its /health answers in JSON). */
export async function connectToOwnServer(): Promise<void> {
  const health = await fetch('/health').catch(() => undefined);
  if (!health?.ok || !health.headers.get('content-type')?.includes('json')) return;
  const body = (await health.json().catch(() => undefined)) as { status?: unknown } | undefined;
  if (body?.status !== 'ok') return;
  serverUrl.value = location.origin;
  await connect();
}

/** The conversation as chat messages, the system prompt first. */
function history(): ApiMessage[] {
  const system = state.system.value.trim();
  const turns = state.messages.value.map(({ role, text }) => ({ role, content: text }));
  return system === '' ? turns : [{ role: 'system', content: system }, ...turns];
}

function figures(reply: Running, stopReason: string, usage?: Usage): state.ServerReplyStats {
  const generatedTokens = usage?.completion_tokens ?? reply.chunks;
  const { started, first, last } = reply;
  const decodeSeconds = first !== undefined && last !== undefined ? (last - first) / 1000 : 0;
  return {
    stopReason,
    promptTokens: usage?.prompt_tokens,
    generatedTokens,
    timeToFirstTokenMs: first === undefined ? undefined : first - started,
    decodeTokensPerSecond: decodeSeconds > 0 ? (generatedTokens - 1) / decodeSeconds : undefined,
  };
}

/** Sends the conversation with a new message to the connected server and streams its reply into the page. */
export async function sendToServer(text: string, settings: Settings): Promise<void> {
  const connection = state.server.value;
  if (connection === undefined) throw new Error('sendToServer: no server is connected');
  stopServer();
  beginReply(text);
  const reply: Running = { controller: new AbortController(), started: performance.now(), chunks: 0 };
  running = reply;
  const { signal } = reply.controller;
  const request = { model: connection.model, messages: history(), parameters: openaiParameters(settings) };
  try {
    for await (const event of streamChat(connection.endpoint, request, signal)) {
      if (signal.aborted) return;
      reply.last = performance.now();
      if (event.type === 'text') {
        reply.first ??= reply.last;
        reply.chunks += 1;
        state.reply.value = [...state.reply.value, { text: event.text, alternatives: [] }];
      } else {
        state.serverStats.value = figures(reply, event.finishReason ?? 'end of stream', event.usage);
        finishReply();
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    state.serverStats.value = figures(reply, 'error');
    finishReply('error');
    state.error.value = errorText(error);
  } finally {
    if (running === reply) running = undefined;
  }
}

/** Ends the server's reply at once: the request is aborted, so the server drops the sequence. */
export function stopServer(): void {
  const reply = running;
  if (reply === undefined) return;
  running = undefined;
  reply.controller.abort();
  state.serverStats.value = figures(reply, 'aborted');
  finishReply('stopped');
}
