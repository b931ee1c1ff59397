import { showConversation } from './chat-actions';
import { deleteConversation, exportConversations, importConversations, saved } from './conversations';
import * as state from './state';

function download(text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = 'loom-chat-conversations.json';
  link.click();
  URL.revokeObjectURL(url);
}

async function importFile(file: File | undefined): Promise<void> {
  if (!file) return;
  try {
    const count = await importConversations(await file.text(), file.name);
    state.notice.value = `Imported ${count} conversation${count === 1 ? '' : 's'} from ${file.name}.`;
  } catch (error) {
    state.error.value = error instanceof Error ? error.message : String(error);
  }
}

/** The conversations kept in this browser (IndexedDB), with export and import as JSON. */
export function ConversationsPanel() {
  return (
    <section class="panel" aria-labelledby="conversations-heading">
      <h2 id="conversations-heading">Conversations</h2>
      <ul class="conversations">
        {saved.value.map((conversation) => (
          <li key={conversation.id}>
            <button
              type="button"
              class="link"
              onClick={() => {
                showConversation(conversation);
              }}
            >
              {conversation.title || '(empty)'}
            </button>
            <button
              type="button"
              aria-label={`Delete ${conversation.title}`}
              onClick={() => void deleteConversation(conversation.id)}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <div class="row">
        <button
          type="button"
          disabled={saved.value.length === 0}
          onClick={() => download(exportConversations())}
        >
          Export JSON
        </button>
        <label class="button">
          Import JSON
          <input
            type="file"
            accept="application/json,.json"
            class="visually-hidden"
            onChange={(event) => void importFile(event.currentTarget.files?.[0])}
          />
        </label>
      </div>
    </section>
  );
}
