import type { Settings } from './settings';

/** How a conversation is turned into a prompt: the story so far continued as is, or a chat template. */
export type PromptMode = 'story' | 'plain' | 'llama2' | 'chatml';

/** Which backend the page asks for: WebGPU when it works (`auto`), or the CPU (`?backend=cpu`). */
export type BackendChoice = 'auto' | 'cpu';

/** A file handed to the worker: its name (for errors) and bytes. */
export interface ModelFile {
  readonly name: string;
  readonly bytes: ArrayBuffer;
}

/** How the worker starts: the backend, the memory it may use, and whether the test hooks answer. */
export interface WorkerOptions {
  readonly backend: BackendChoice;
  /** Bytes the weights, cache and activations may take in all (`?memory-limit=BYTES`; default: no limit). */
  readonly memoryLimit?: number;
  /** Caps the adapter's maxBufferSize and maxStorageBufferBindingSize as the worker sees them (`?adapter-limit=BYTES`). */
  readonly adapterLimit?: number;
  /** Whether `lose-device` is honoured (`?test-hooks`). */
  readonly testHooks: boolean;
}

/** A message of a conversation the worker continues: the page's text of it. */
export interface HistoryMessage {
  readonly role: 'user' | 'assistant';
  readonly text: string;
}

/** What the page asks the worker. */
export type Request =
  | { readonly type: 'init'; readonly options: WorkerOptions }
  /** `context`: the positions the cache holds (default: the model's maxSeqLen). */
  | { readonly type: 'load'; readonly files: readonly ModelFile[]; readonly context?: number }
  /** A new conversation; `history` (whole turns, user first) is prefilled with the next message. */
  | {
      readonly type: 'reset';
      readonly mode: PromptMode;
      readonly system: string;
      readonly history: readonly HistoryMessage[];
    }
  | { readonly type: 'send'; readonly turn: number; readonly text: string; readonly settings: Settings }
  | { readonly type: 'stop' }
  | { readonly type: 'attention'; readonly layer: number; readonly head: number }
  /** Test hook: destroys the WebGPU device, as a lost one (honoured with `testHooks` only). */
  | { readonly type: 'lose-device' };

/** The backend the worker runs on, and why it is not WebGPU when it is not. */
export interface BackendInfo {
  readonly name: 'webgpu' | 'cpu';
  /** The WebGPU adapter (vendor / architecture / description), or the CPU's thread count. */
  readonly adapter: string;
  /** Why the worker fell back to the CPU; absent on WebGPU. */
  readonly notice?: string;
}

/** The model that was loaded. */
export interface ModelInfo {
  /** The file names it came from. */
  readonly source: string;
  /** Architecture in a line (`llama dim=64 ... vocab=512 seqLen=512`). */
  readonly description: string;
  readonly parameters: number;
  readonly weightBytes: number;
  readonly maxSeqLen: number;
  /** The prompt mode that suits the tokenizer (a chat template when it has the special tokens). */
  readonly mode: PromptMode;
}

/** An alternative the sampler considered for a generated token. */
export interface Alternative {
  readonly text: string;
  readonly probability: number;
}

/** The figures of a finished reply. */
export interface ReplyStats {
  readonly stopReason: string;
  readonly promptTokens: number;
  /** Prompt tokens already in the cache from earlier turns, not run again. */
  readonly reusedTokens: number;
  /** Prompt tokens run through the model in this turn's prefill. */
  readonly prefilledTokens: number;
  readonly generatedTokens: number;
  readonly timeToFirstTokenMs: number;
  readonly prefillTokensPerSecond: number;
  readonly decodeTokensPerSecond: number;
  /** Positions of the context in use after the reply, and how many it holds. */
  readonly contextUsed: number;
  readonly contextCapacity: number;
  /** Bytes of the key/value cache. */
  readonly cacheBytes: number;
}

/** One head's attention over the last tokens of the conversation, as the last reply left it. */
export interface AttentionMap {
  readonly layer: number;
  readonly head: number;
  /** The model's layer and head counts, for the selects. */
  readonly layers: number;
  readonly heads: number;
  /** The tokens shown, as text: the last `tokens.length` of the conversation's `total` (none before a reply). */
  readonly tokens: readonly string[];
  readonly total: number;
  /** [T, T] row-major, T = tokens.length: row i is token i's attention over tokens 0..T-1. */
  readonly probs: Float32Array;
}

/** What the worker tells the page; a reply's reports carry the number of the turn (`send`) they answer. */
export type Report =
  | { readonly type: 'backend'; readonly backend: BackendInfo }
  | { readonly type: 'loaded'; readonly model: ModelInfo }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'dropped'; readonly turn: number; readonly notice: string }
  | {
      readonly type: 'token';
      readonly turn: number;
      readonly text: string;
      readonly alternatives: readonly Alternative[];
    }
  | { readonly type: 'done'; readonly turn: number; readonly text: string; readonly stats: ReplyStats }
  /** The reply ended early for a reason other than Stop (the WebGPU device was lost); no `done` follows. */
  | { readonly type: 'interrupted'; readonly turn: number; readonly notice: string }
  | { readonly type: 'attention'; readonly map: AttentionMap };
