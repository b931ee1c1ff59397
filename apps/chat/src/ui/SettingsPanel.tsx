import type { PromptMode } from '../protocol';
import { parseSetting, SETTING_FIELDS } from '../settings';
import { newChat } from './chat-actions';
import * as state from './state';

const MODES: readonly { readonly value: PromptMode; readonly label: string }[] = [
  { value: 'story', label: 'Story (continue the text)' },
  { value: 'plain', label: 'Plain chat (User: / Assistant:)' },
  { value: 'llama2', label: 'Llama 2 chat' },
  { value: 'chatml', label: 'ChatML' },
];

/** The system prompt, prompt format and sampling controls, each checked as it is typed. */
export function SettingsPanel() {
  const text = state.settingText.value;
  const server = state.server.value !== undefined;
  return (
    <section class="panel" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <label for="mode">Prompt format (starts a new chat)</label>
      <select
        id="mode"
        disabled={server}
        value={state.mode.value}
        onChange={(event) => {
          state.mode.value = event.currentTarget.value as PromptMode;
          newChat();
        }}
      >
        {MODES.map((mode) => (
          <option key={mode.value} value={mode.value}>
            {mode.label}
          </option>
        ))}
      </select>
      {server && (
        <p class="hint">
          A server applies its own chat template; of the controls below it takes those of the OpenAI API.
        </p>
      )}
      <label for="system">System prompt (chat formats; applies to a new chat)</label>
      <textarea
        id="system"
        rows={2}
        value={state.system.value}
        onInput={(event) => {
          state.system.value = event.currentTarget.value;
        }}
      />
      <div class="settings-grid">
        {SETTING_FIELDS.map(({ name, label, step, openai }) => {
          const parsed = parseSetting(name, text[name]);
          const errorId = `${name}-error`;
          return (
            <div key={name} class="setting">
              <label for={name}>{label}</label>
              <input
                id={name}
                type="number"
                step={step}
                disabled={server && openai === undefined}
                title={server ? (openai ? `sent as ${openai}` : 'not an OpenAI API parameter') : undefined}
                value={text[name]}
                aria-invalid={'error' in parsed}
                aria-describedby={'error' in parsed ? errorId : undefined}
                onInput={(event) => {
                  state.settingText.value = { ...state.settingText.value, [name]: event.currentTarget.value };
                }}
              />
              {'error' in parsed && (
                <span id={errorId} class="field-error" role="alert">
                  {parsed.error}
                </span>
              )}
            </div>
          );
        })}
      </div>
    </section>
  );
}
