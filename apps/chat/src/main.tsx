import { render } from 'preact';
import type { WorkerOptions } from './protocol';
import { App } from './ui/App';
import { showConversation } from './ui/chat-actions';
import { refreshSaved, saved } from './ui/conversations';
import { servedModel } from './ui/model-download';
import { loadFiles, loseDevice, startWorker } from './ui/model-worker-client';
import { connectToOwnServer } from './ui/server-chat';
import * as state from './ui/state';
import './styles.css';

const query = new URLSearchParams(location.search);
/** A positive byte count from the query (`?memory-limit=`, `?adapter-limit=`); anything else is shown as an error. */
function bytesParameter(name: string): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const bytes = Number(text);
  if (Number.isSafeInteger(bytes) && bytes > 0) return bytes;
  state.error.value = `?${name}= must be a positive whole number of bytes, got ${JSON.stringify(text)}; it is ignored`;
  return undefined;
}
const memoryLimit = bytesParameter('memory-limit');
const adapterLimit = bytesParameter('adapter-limit');
const options: WorkerOptions = {
  backend: query.get('backend') === 'cpu' ? 'cpu' : 'auto',
  ...(memoryLimit === undefined ? {} : { memoryLimit }),
  ...(adapterLimit === undefined ? {} : { adapterLimit }),
  testHooks: query.has('test-hooks'),
};
startWorker(options);
if (options.testHooks) Object.assign(window, { loomChatTest: { loseDevice } });
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
