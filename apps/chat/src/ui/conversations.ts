import { signal } from '@preact/signals';
import { createStore, del, entries, set } from 'idb-keyval';
import type { HistoryMessage, PromptMode } from '../protocol';
import * as state from './state';

/** A conversation as kept in IndexedDB and in exported JSON: its text only. */
export interface SavedConversation {
  readonly id: string;
  readonly title: string;
  readonly mode: PromptMode;
  readonly system: string;
  readonly messages: readonly {
    readonly role: 'user' | 'assistant';
    readonly text: string;
    readonly stopped?: string;
  }[];
  readonly updated: number;
}

const EXPORT_FORMAT = 'loom-chat-conversations';
const MODES: readonly PromptMode[] = ['story', 'plain', 'llama2', 'chatml'];
const store = createStore('loom-chat', 'conversations');

/** The conversation on the page, and every saved one, newest first. */
export const currentId = signal<string>(crypto.randomUUID());
export const saved = signal<readonly SavedConversation[]>([]);

export async function refreshSaved(): Promise<void> {
  const all = (await entries<string, SavedConversation>(store)).map(([, conversation]) => conversation);
  saved.value = all.sort((a, b) => b.updated - a.updated);
}

/**
 * Saves the conversation on the page (after each reply), or `shown` in its place, in one IndexedDB put: a page
 * closed meanwhile leaves it saved whole, or as it was.
 */
export async function saveConversation(
  shown: readonly state.Message[] = state.messages.value,
): Promise<void> {
  const messages = shown.map(({ role, text, stopped }) => ({ role, text, stopped }));
  if (messages.length === 0) return;
  const title = messages[0].text.slice(0, 60);
  const conversation: SavedConversation = {
    id: currentId.value,
    title,
    mode: state.mode.value,
    system: state.system.value,
    messages,
    updated: Date.now(),
  };
  await set(conversation.id, conversation, store);
  await refreshSaved();
}

/** The whole turns of messages (a user message, then its answer), for the model to read again. */
export function historyOf(
  messages: readonly { readonly role: string; readonly text: string }[],
): HistoryMessage[] {
  const turns: HistoryMessage[] = [];
  for (let i = 0; i + 1 < messages.length; i++) {
    const [user, answer] = [messages[i], messages[i + 1]];
    if (user.role !== 'user' || answer.role !== 'assistant') continue;
    turns.push({ role: 'user', text: user.text }, { role: 'assistant', text: answer.text });
    i++;
  }
  return turns;
}

export async function deleteConversation(id: string): Promise<void> {
  await del(id, store);
  await refreshSaved();
}

export function exportConversations(): string {
  return JSON.stringify({ format: EXPORT_FORMAT, version: 1, conversations: saved.value }, null, 2);
}

function checkConversation(value: unknown, index: number, source: string): SavedConversation {
  const where = `${source}: conversations[${index}]`;
  if (typeof value !== 'object' || value === null) throw new Error(`${where} is not an object`);
  const c = value as Record<string, unknown>;
  for (const key of ['id', 'title', 'system'] as const) {
    if (typeof c[key] !== 'string') throw new Error(`${where}.${key} must be a string, got ${typeof c[key]}`);
  }
  if (!MODES.includes(c.mode as PromptMode)) {
    throw new Error(`${where}.mode must be one of ${MODES.join(', ')}, got ${JSON.stringify(c.mode)}`);
  }
  if (typeof c.updated !== 'number') throw new Error(`${where}.updated must be a number (ms since 1970)`);
  if (!Array.isArray(c.messages)) throw new Error(`${where}.messages must be an array`);
  c.messages.forEach((message: unknown, m: number) => {
    const { role, text, stopped } = (message ?? {}) as Record<string, unknown>;
    if (
      (role !== 'user' && role !== 'assistant') ||
      typeof text !== 'string' ||
      !['undefined', 'string'].includes(typeof stopped)
    ) {
      throw new Error(
        `${where}.messages[${m}] must be { role: "user" | "assistant", text: string, stopped?: string }`,
      );
    }
  });
  return c as unknown as SavedConversation;
}

/** Adds the conversations of an exported file (same ids are replaced); throws naming what is wrong. */
export async function importConversations(text: string, source: string): Promise<number> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const root = (json ?? {}) as Record<string, unknown>;
  if (root.format !== EXPORT_FORMAT || !Array.isArray(root.conversations)) {
    throw new Error(
      `${source}: expected a file exported by Loom chat ({ "format": "${EXPORT_FORMAT}", "conversations": [...] })`,
    );
  }
  const conversations = root.conversations.map((value: unknown, i: number) =>
    checkConversation(value, i, source),
  );
  for (const conversation of conversations) await set(conversation.id, conversation, store);
  await refreshSaved();
  return conversations.length;
}
