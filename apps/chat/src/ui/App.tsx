import { useEffect } from 'preact/hooks';
import { AttentionView } from './AttentionView';
import { Composer } from './Composer';
import { ConversationsPanel } from './ConversationsPanel';
import { stop } from './chat-actions';
import { ModelPanel } from './ModelPanel';
import { SettingsPanel } from './SettingsPanel';
import { StatsBar } from './StatsBar';
import * as state from './state';
import { Transcript } from './Transcript';

const THEMES = ['system', 'light', 'dark'] as const;

export function App() {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') stop();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    document.documentElement.dataset.theme = state.theme.value;
  }, [state.theme.value]);
  const backend = state.backend.value;
  return (
    <div class="app">
      <header class="top">
        <h1>Loom chat</h1>
        <label for="theme">Theme</label>
        <select
          id="theme"
          value={state.theme.value}
          onChange={(event) => {
            state.theme.value = event.currentTarget.value as (typeof THEMES)[number];
          }}
        >
          {THEMES.map((theme) => (
            <option key={theme} value={theme}>
              {theme}
            </option>
          ))}
        </select>
      </header>
      {backend?.notice && (
        <p class="notice backend-notice" role="status">
          {backend.notice}
        </p>
      )}
      {state.error.value && (
        <p class="error" role="alert">
          {state.error.value}
        </p>
      )}
      {state.notice.value && (
        <p class="notice" role="status">
          {state.notice.value}
        </p>
      )}
      <main class="layout">
        <div class="chat">
          <Transcript />
          <Composer />
          <AttentionView />
        </div>
        <aside class="side">
          <ModelPanel />
          <StatsBar />
          <SettingsPanel />
          <ConversationsPanel />
        </aside>
      </main>
    </div>
  );
}
