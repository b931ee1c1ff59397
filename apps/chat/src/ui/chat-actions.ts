import type { Settings } from '../settings';
import { currentId } from './conversations';
import { resetConversation, sendMessage, stop as stopWorker } from './model-worker-client';
import { sendToServer, stopServer } from './server-chat';
import * as state from './state';

/** Sends a message to the model in use: the connected server, else the model in the worker. */
export function send(text: string, settings: Settings): void {
  if (state.server.value === undefined) sendMessage(text, settings);
  else void sendToServer(text, settings);
}

/** Ends the reply being streamed at once (Stop, Esc). */
export function stop(): void {
  stopServer();
  stopWorker();
}

/** Clears the page and starts a new conversation, saved under a new id. */
export function newChat(): void {
  stop();
  resetConversation(state.mode.value, state.system.value);
  currentId.value = crypto.randomUUID();
  state.messages.value = [];
  state.stats.value = undefined;
  state.serverStats.value = undefined;
  state.notice.value = undefined;
}
