import { saveConversation } from './conversations';
import * as state from './state';

/** Shows the user's message and an empty reply to stream into. */
export function beginReply(text: string): void {
  state.messages.value = [...state.messages.value, { role: 'user', text }];
  state.reply.value = [];
  state.busy.value = 'generating';
  state.error.value = undefined;
  state.notice.value = undefined;
}

/** The conversation with the streamed reply joined to it. */
function withReply(stopped?: string): readonly state.Message[] {
  const pieces = state.reply.value;
  const text = pieces.map((piece) => piece.text).join('');
  return [...state.messages.value, { role: 'assistant', text, pieces, stopped }];
}

/** Joins the streamed reply to the conversation once it is done or stopped, and saves the conversation. */
export function finishReply(stopped?: string): void {
  state.messages.value = withReply(stopped);
  state.reply.value = [];
  state.busy.value = 'idle';
  void saveConversation();
}

/** Saves the conversation with the reply so far marked as stopped by the page closing (the page is going). */
export function saveClosedReply(): void {
  void saveConversation(withReply('page closed'));
}
