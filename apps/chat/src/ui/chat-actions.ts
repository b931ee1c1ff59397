import type { Settings } from '../settings';
import { currentId, historyOf, type SavedConversation } from './conversations';
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

/**
 * Shows a saved conversation on the page and starts the model's conversation from it: the next message prefills
 * its turns (the oldest dropped, with the notice, when they do not fit).
 */
export function showConversation(conversation: SavedConversation): void {
  currentId.value = conversation.id;
  state.messages.value = conversation.messages;
  state.mode.value = conversation.mode;
  state.system.value = conversation.system;
  resetConversation(conversation.mode, conversation.system, historyOf(conversation.messages));
  state.notice.value = 'Restored from this browser; the model reads it again with your next message.';
}
