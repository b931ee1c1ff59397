import type { BackendChoice, ModelFile, PromptMode, Report, Request } from '../protocol';
import type { Settings } from '../settings';
import { currentId, saveConversation } from './conversations';
import * as state from './state';

const worker = new Worker(new URL('../worker/model-worker.ts', import.meta.url), { type: 'module' });
/** The number of the latest `send`: reports of earlier (stopped) turns are ignored. */
let turn = 0;
const post = (request: Request, transfer: Transferable[] = []) => worker.postMessage(request, transfer);

/** Joins the streamed reply to the conversation once it is done or stopped. */
function finishReply(stopped?: string): void {
  const pieces = state.reply.value;
  const text = pieces.map((piece) => piece.text).join('');
  state.messages.value = [...state.messages.value, { role: 'assistant', text, pieces, stopped }];
  state.reply.value = [];
  state.busy.value = 'idle';
  void saveConversation();
}

function onReport(report: Report): void {
  switch (report.type) {
    case 'backend':
      state.backend.value = report.backend;
      return;
    case 'loaded':
      state.model.value = report.model;
      state.mode.value = report.model.mode;
      state.busy.value = 'idle';
      state.error.value = undefined;
      return;
    case 'error':
      if (state.busy.value === 'generating') finishReply('error');
      state.busy.value = 'idle';
      state.error.value = report.message;
      return;
    case 'dropped':
      if (report.turn !== turn) return;
      state.notice.value = report.notice;
      return;
    case 'token':
      if (report.turn !== turn || state.busy.value !== 'generating') return; // stopped on the page already
      state.reply.value = [...state.reply.value, { text: report.text, alternatives: report.alternatives }];
      return;
    case 'done':
      if (report.turn !== turn) return;
      state.stats.value = report.stats;
      if (state.busy.value !== 'generating') return;
      if (report.text !== '')
        state.reply.value = [...state.reply.value, { text: report.text, alternatives: [] }];
      finishReply(report.stats.stopReason === 'context-full' ? 'context full' : undefined);
      return;
  }
}

worker.onmessage = (event: MessageEvent<Report>) => onReport(event.data);
worker.onerror = (event) => {
  state.busy.value = 'idle';
  state.error.value = `the model worker failed: ${event.message}`;
};

export function startWorker(choice: BackendChoice): void {
  post({ type: 'init', backend: choice });
}

/** Hands the files to the worker (their buffers move there, nothing is copied). */
export function loadFiles(files: readonly ModelFile[]): void {
  state.busy.value = 'loading';
  state.error.value = undefined;
  post(
    { type: 'load', files },
    files.map((file) => file.bytes),
  );
}

export function sendMessage(text: string, settings: Settings): void {
  state.messages.value = [...state.messages.value, { role: 'user', text }];
  state.reply.value = [];
  state.busy.value = 'generating';
  state.error.value = undefined;
  state.notice.value = undefined;
  turn += 1;
  post({ type: 'send', turn, text, settings });
}

/** Ends the reply on the page at once; the worker stops before its next token. */
export function stop(): void {
  if (state.busy.value !== 'generating') return;
  post({ type: 'stop' });
  finishReply('stopped');
}

/** Starts a new conversation in the worker, with the page's prompt mode and system prompt. */
export function resetConversation(mode: PromptMode, system: string): void {
  stop();
  post({ type: 'reset', mode, system });
}

/** Clears the page and starts a new conversation, saved under a new id. */
export function newChat(): void {
  resetConversation(state.mode.value, state.system.value);
  currentId.value = crypto.randomUUID();
  state.messages.value = [];
  state.stats.value = undefined;
  state.notice.value = undefined;
}
