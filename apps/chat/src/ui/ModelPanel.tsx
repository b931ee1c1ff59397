import { useSignal } from '@preact/signals';
import type { ModelFile } from '../protocol';
import { cachedSets, deleteCachedModel, downloadModel, fileName, progress } from './model-download';
import { loadFiles } from './model-worker-client';
import { ServerConnect } from './ServerConnect';
import * as state from './state';

async function readPicked(list: FileList | null | undefined): Promise<void> {
  if (!list || list.length === 0) return;
  const files: ModelFile[] = await Promise.all(
    [...list].map(async (file) => ({ name: file.name, bytes: await file.arrayBuffer() })),
  );
  loadFiles(files);
}

async function loadUrls(urls: readonly string[]): Promise<void> {
  state.busy.value = 'loading';
  state.error.value = undefined;
  try {
    loadFiles(await downloadModel(urls));
  } catch (error) {
    state.busy.value = 'idle';
    state.error.value = error instanceof Error ? error.message : String(error);
  }
}

const describeBytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * Loading a model: a file picker and drop zone (several files at once), or URLs downloaded into the cache; or
 * connecting to a server.
 */
export function ModelPanel() {
  const dragging = useSignal(false);
  const urlText = useSignal('');
  const info = state.model.value;
  const server = state.server.value;
  const loading = state.busy.value === 'loading';
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const urls = urlText.value.split(/\s+/).filter((url) => url !== '');
    if (urls.length > 0) void loadUrls(urls);
  };
  return (
    <section class="panel" aria-labelledby="model-heading">
      <h2 id="model-heading">Model</h2>
      <p class="model-info" aria-live="polite">
        {server
          ? `Connected to ${server.endpoint.base}: ${server.model}; replies come from the server.`
          : loading
            ? 'Loading…'
            : info
              ? `${info.source}: ${info.description}, ${(info.parameters / 1e6).toFixed(2)}M parameters`
              : 'No model loaded.'}
      </p>
      <label
        class={`drop-zone${dragging.value ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          dragging.value = true;
        }}
        onDragLeave={() => {
          dragging.value = false;
        }}
        onDrop={(event) => {
          event.preventDefault();
          dragging.value = false;
          void readPicked(event.dataTransfer?.files);
        }}
      >
        <span>
          Drop or pick the model files together: a llama2.c <code>.bin</code> + <code>tokenizer.bin</code>; a{' '}
          <code>model.safetensors</code> + <code>config.json</code> + tokenizer; or a Loom checkpoint's files.
        </span>
        <input
          type="file"
          multiple
          aria-label="Model files"
          disabled={loading}
          onChange={(event) => {
            const input = event.currentTarget;
            void readPicked(input.files);
            input.value = ''; // the same files picked again (with another Context) load again
          }}
        />
      </label>
      <div class="context-row">
        <label for="model-context">Context (positions; empty: the model's maxSeqLen)</label>
        <input
          id="model-context"
          inputMode="numeric"
          value={state.context.value}
          placeholder={info ? String(info.maxSeqLen) : ''}
          onInput={(event) => {
            state.context.value = event.currentTarget.value;
          }}
        />
      </div>
      <form class="url-form" onSubmit={onSubmit}>
        <label for="model-urls">Model URLs (space separated)</label>
        <input
          id="model-urls"
          type="url"
          value={urlText.value}
          placeholder="https://…/stories15M.bin https://…/tokenizer.bin"
          onInput={(event) => {
            urlText.value = event.currentTarget.value;
          }}
        />
        <button type="submit" disabled={loading}>
          Download
        </button>
      </form>
      {progress.value && (
        <progress
          aria-label="Download progress"
          value={progress.value.received}
          max={progress.value.total || undefined}
        >
          {describeBytes(progress.value.received)}
        </progress>
      )}
      {cachedSets.value.length > 0 && (
        <ul class="cached" aria-label="Models cached in this browser">
          {cachedSets.value.map((urls) => (
            <li key={urls.join(' ')}>
              <span>{urls.map(fileName).join(' + ')}</span>
              <button type="button" disabled={loading} onClick={() => void loadUrls(urls)}>
                Load
              </button>
              <button type="button" onClick={() => void deleteCachedModel(urls)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <ServerConnect />
    </section>
  );
}
