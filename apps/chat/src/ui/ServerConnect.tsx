import { apiKey, connect, connecting, disconnect, serverUrl } from './server-chat';
import * as state from './state';

/** "Connect to a server": an OpenAI-compatible API's URL and key, then a model of those it lists. */
export function ServerConnect() {
  const connection = state.server.value;
  return (
    <form
      class="server-form"
      aria-labelledby="server-heading"
      onSubmit={(event) => {
        event.preventDefault();
        void connect();
      }}
    >
      <h3 id="server-heading">Connect to a server</h3>
      <p class="hint">
        Any OpenAI-compatible API (<code>pnpm serve</code>, llama.cpp, vLLM, …): replies stream from its{' '}
        <code>/v1/chat/completions</code>.
      </p>
      <label for="server-url">Server URL</label>
      <input
        id="server-url"
        type="url"
        value={serverUrl.value}
        onInput={(event) => {
          serverUrl.value = event.currentTarget.value;
        }}
      />
      <label for="api-key">API key (optional)</label>
      <input
        id="api-key"
        type="password"
        autocomplete="off"
        value={apiKey.value}
        onInput={(event) => {
          apiKey.value = event.currentTarget.value;
        }}
      />
      <div class="row">
        <button type="submit" disabled={connecting.value}>
          {connection ? 'Reconnect' : 'Connect'}
        </button>
        {connection && (
          <button type="button" onClick={disconnect}>
            Disconnect
          </button>
        )}
      </div>
      {connection && (
        <>
          <label for="server-model">Server model</label>
          <select
            id="server-model"
            value={connection.model}
            onChange={(event) => {
              state.server.value = { ...connection, model: event.currentTarget.value };
            }}
          >
            {connection.models.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </>
      )}
    </form>
  );
}
