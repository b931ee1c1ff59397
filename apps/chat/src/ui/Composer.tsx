import { useSignal } from '@preact/signals';
import { parseSetting, SETTING_FIELDS, type Settings } from '../settings';
import { newChat, send as sendMessage, stop } from './chat-actions';
import * as state from './state';

/** The controls as numbers, or undefined while one of them is not valid. */
function validSettings(): Settings | undefined {
  const values: Partial<Record<keyof Settings, number>> = {};
  for (const { name } of SETTING_FIELDS) {
    const parsed = parseSetting(name, state.settingText.value[name]);
    if ('error' in parsed) return undefined;
    values[name] = parsed.value;
  }
  return values as Settings;
}

/** The message box: Enter sends, Shift+Enter starts a new line; Stop (or Esc) ends the reply. */
export function Composer() {
  const draft = useSignal('');
  const settings = validSettings();
  const generating = state.busy.value === 'generating';
  const ready = state.model.value !== undefined || state.server.value !== undefined;
  const canSend = ready && state.busy.value === 'idle' && settings !== undefined;
  const send = () => {
    const text = draft.value;
    if (!canSend || text.trim() === '') return;
    draft.value = '';
    sendMessage(text, settings);
  };
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label for="message" class="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        rows={2}
        placeholder={
          ready
            ? 'Write a message (Enter sends, Shift+Enter: new line)'
            : 'Load a model or connect to a server first'
        }
        value={draft.value}
        onInput={(event) => {
          draft.value = event.currentTarget.value;
        }}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      <div class="composer-buttons">
        {generating ? (
          <button type="button" onClick={stop}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={!canSend}>
            Send
          </button>
        )}
        <button type="button" onClick={newChat}>
          New chat
        </button>
      </div>
      {settings === undefined && <p class="field-error">Fix the settings marked above to send.</p>}
    </form>
  );
}
