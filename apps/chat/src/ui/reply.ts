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

/** Joins the streamed reply to the conversation once it is done or stopped, and saves the conversation. */
export function finishReply(stopped?: string): void {
  const pieces = state.reply.value;
  const text = pieces.map((piece) => piece.text).join('');
  state.messages.value = [...state.messages.value, { role: 'assistant', text, pieces, stopped }];
  state.reply.value = [];
  state.busy.value = 'idle';
  void saveConversation();
}
