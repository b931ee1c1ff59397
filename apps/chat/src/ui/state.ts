import { signal } from '@preact/signals';
import type { Alternative, BackendInfo, ModelInfo, PromptMode, ReplyStats } from '../protocol';
import type { Endpoint } from '../server/openai-api';
import { DEFAULT_SETTINGS, type SettingName } from '../settings';

/** A generated token as shown: its text and the sampler's likeliest alternatives. */
export interface Piece {
  readonly text: string;
  readonly alternatives: readonly Alternative[];
}

/** A message of the conversation on the page; a reply keeps its pieces for the probability tooltips. */
export interface Message {
  readonly role: 'user' | 'assistant';
  readonly text: string;
  readonly pieces?: readonly Piece[];
  /** Why the reply ended, when it was not its natural end. */
  readonly stopped?: string;
}

/** An OpenAI-compatible server the chat talks to, and the model of it in use. */
export interface ServerConnection {
  readonly endpoint: Endpoint;
  readonly models: readonly string[];
  readonly model: string;
}

/** The figures of a reply from a server; those it did not give (usage of a stopped reply) are absent. */
export interface ServerReplyStats {
  readonly stopReason: string;
  readonly promptTokens?: number;
  readonly generatedTokens: number;
  readonly timeToFirstTokenMs?: number;
  /** Tokens after the first, over the time from the first to the end. */
  readonly decodeTokensPerSecond?: number;
}

export const backend = signal<BackendInfo | undefined>(undefined);
export const model = signal<ModelInfo | undefined>(undefined);
/** What the model is doing: nothing, loading, or writing a reply. */
export const busy = signal<'idle' | 'loading' | 'generating'>('idle');
export const error = signal<string | undefined>(undefined);
export const notice = signal<string | undefined>(undefined);
export const messages = signal<readonly Message[]>([]);
/** The reply being streamed. */
export const reply = signal<readonly Piece[]>([]);
export const stats = signal<ReplyStats | undefined>(undefined);
/** The server replies come from; undefined: the model in this page's worker. */
export const server = signal<ServerConnection | undefined>(undefined);
export const serverStats = signal<ServerReplyStats | undefined>(undefined);
export const mode = signal<PromptMode>('story');
export const system = signal('');
/** The text in each control, as typed, and the sampler's message where it is not valid. */
export const settingText = signal<Record<SettingName, string>>(
  Object.fromEntries(
    Object.entries(DEFAULT_SETTINGS).map(([name, value]) => [name, String(value)]),
  ) as Record<SettingName, string>,
);
/** The Context control as typed: the positions of the KV cache ('' for the model's maxSeqLen). */
export const context = signal('');
export const theme = signal<'system' | 'light' | 'dark'>('system');
