import type { HistoryMessage, ModelFile, PromptMode, Report, Request, WorkerOptions } from '../protocol';
import type { Settings } from '../settings';
import { attention, attentionPending } from './attention-state';
import { beginReply, finishReply, saveClosedReply } from './reply';
import * as state from './state';

const worker = new Worker(new URL('../worker/model-worker.ts', import.meta.url), { type: 'module' });
/** The number of the latest `send`: reports of earlier (stopped) turns are ignored. */
let turn = 0;
const post = (request: Request, transfer: Transferable[] = []) => worker.postMessage(request, transfer);

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
      attentionPending.value = false;
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
    case 'interrupted':
      if (report.turn !== turn || state.busy.value !== 'generating') return;
      finishReply('device lost');
      state.notice.value = report.notice;
      return;
    case 'attention':
      attention.value = report.map;
      attentionPending.value = false;
      return;
  }
}

worker.onmessage = (event: MessageEvent<Report>) => onReport(event.data);
worker.onerror = (event) => {
  state.busy.value = 'idle';
  state.error.value = `the model worker failed: ${event.message}`;
};

// A closed or reloaded page ends its model at once; a reply being written is saved as stopped there (one
// IndexedDB put: the conversation is kept whole with it, or as it was before the reply).
addEventListener('pagehide', () => {
  if (state.busy.value === 'generating') saveClosedReply();
  worker.terminate();
});

export function startWorker(options: WorkerOptions): void {
  post({ type: 'init', options });
}

/** Hands the files to the worker (their buffers move there, nothing is copied), with the Context asked for. */
export function loadFiles(files: readonly ModelFile[]): void {
  state.busy.value = 'loading';
  state.error.value = undefined;
  const context = state.context.value.trim();
  post(
    { type: 'load', files, ...(context === '' ? {} : { context: Number(context) }) },
    files.map((file) => file.bytes),
  );
}

export function sendMessage(text: string, settings: Settings): void {
  beginReply(text);
  turn += 1;
  post({ type: 'send', turn, text, settings });
}

/** Ends the reply on the page at once; the worker stops before its next token. */
export function stop(): void {
  if (state.busy.value !== 'generating') return;
  post({ type: 'stop' });
  finishReply('stopped');
}

/** Asks the worker for the attention map of the last reply (computed once the reply has ended). */
export function requestAttention(layer: number, head: number): void {
  attentionPending.value = true;
  post({ type: 'attention', layer, head });
}

/**
 * Starts a new conversation in the worker, with the page's prompt mode and system prompt; `history` (a restored
 * conversation) is prefilled with the next message.
 */
export function resetConversation(
  mode: PromptMode,
  system: string,
  history: readonly HistoryMessage[] = [],
): void {
  stop();
  post({ type: 'reset', mode, system, history });
}

/** Test hook (`?test-hooks`): the worker destroys its WebGPU device, as if it were lost. */
export function loseDevice(): void {
  post({ type: 'lose-device' });
}
