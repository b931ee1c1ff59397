import { render } from 'preact';
import type { BackendChoice } from './protocol';
import { App } from './ui/App';
import { refreshSaved, saved, showConversation } from './ui/conversations';
import { servedModel } from './ui/model-download';
import { loadFiles, startWorker } from './ui/model-worker-client';
import { connectToOwnServer } from './ui/server-chat';
import * as state from './ui/state';
import './styles.css';

const choice: BackendChoice = new URLSearchParams(location.search).get('backend') === 'cpu' ? 'cpu' : 'auto';
startWorker(choice);
render(<App />, document.getElementById('app')!);

// The newest saved conversation comes back on reload; a model served under /model/ (pnpm start) loads at once; a
// page served by `pnpm serve` talks to that server.
void refreshSaved().then(() => {
  const [latest] = saved.value;
  if (latest && state.messages.value.length === 0) showConversation(latest);
});
void servedModel()
  .then((files) => {
    if (files.length > 0) loadFiles(files);
  })
  .catch((error: unknown) => {
    state.error.value = error instanceof Error ? error.message : String(error);
  });
void connectToOwnServer();
