/// <reference lib="webworker" />
import { kvCacheBytes } from '@loom/kvcache';
import { describeConfig, transformerFromTensors } from '@loom/models';
import { headDim } from '@loom/nn';
import { type ChatEvent, type ChatSession, TextGenerator } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import type { Tokenizer } from '@loom/tokenizer';
import type { BackendChoice, ModelFile, PromptMode, Report, Request } from '../protocol';
import type { Settings } from '../settings';
import { attentionOf } from './attention';
import { cpuBackend, type PickedBackend, pickBackend } from './backend';
import { readModelFiles } from './model-files';
import { nextTask } from './next-task';
import { type StoryEvent, StorySession } from './story-session';

declare const self: DedicatedWorkerGlobalScope;

/** The alternatives shown when hovering a generated token. */
const TOP_ALTERNATIVES = 5;

let backend: Promise<PickedBackend> | undefined;
let files: readonly ModelFile[] = [];
let generator: TextGenerator | undefined;
let conversation: ChatSession | StorySession | undefined;
let mode: PromptMode = 'story';
let system = '';
let running: AbortController | undefined;
/** The reply being generated; the next one starts once it has ended. */
let current: Promise<void> = Promise.resolve();
/** The conversation's tokens (prompt and reply) as the last reply left them, for the attention view. */
let replyTokens: readonly number[] = [];

const report = (message: Report) => self.postMessage(message);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The mode that suits a tokenizer: ChatML or Llama 2 chat when it has their tokens, a story otherwise. */
function modeFor(tokenizer: Tokenizer): PromptMode {
  if (tokenizer.specialTokenId('<|im_start|>') !== undefined) return 'chatml';
  if (tokenizer.kind === 'llama2c' && tokenizer.vocabSize === 32000) return 'llama2';
  return 'story';
}

function startBackend(choice: BackendChoice): void {
  backend = pickBackend(choice);
  void backend.then(({ info, lost }) => {
    report({ type: 'backend', backend: info });
    void lost.then(async (reason) => {
      backend = cpuBackend(`The WebGPU device was lost (${reason}); running on the CPU from now on.`);
      report({ type: 'backend', backend: (await backend).info });
      if (generator !== undefined) await load(files);
    });
  });
}

function freeModel(): void {
  conversation?.dispose();
  conversation = undefined;
  generator?.model.dispose();
  generator = undefined;
}

function newConversation(): void {
  conversation?.dispose();
  replyTokens = [];
  if (generator === undefined) return;
  conversation =
    mode === 'story'
      ? new StorySession(generator)
      : generator.chat({ template: mode, ...(system.trim() ? { system } : {}) });
}

async function load(picked: readonly ModelFile[]): Promise<void> {
  await settled();
  const { backend: device } = await (backend ?? Promise.reject(new Error('the worker was not started')));
  const { loaded, tokenizer, source } = await readModelFiles(picked);
  freeModel();
  setBackend(device);
  const model = transformerFromTensors(loaded, source);
  try {
    generator = new TextGenerator(model, tokenizer);
  } catch (error) {
    model.dispose();
    throw error;
  }
  files = picked;
  mode = modeFor(tokenizer);
  newConversation();
  const weightBytes = loaded.tensors.reduce((sum, tensor) => sum + tensor.data.byteLength, 0);
  const parameters = loaded.tensors.reduce((sum, tensor) => sum + tensor.data.length, 0);
  report({
    type: 'loaded',
    model: {
      source,
      description: describeConfig(loaded.config),
      parameters,
      weightBytes,
      maxSeqLen: loaded.config.maxSeqLen,
      mode,
    },
  });
}

function cacheBytes(capacity: number): number {
  const { config } = generator!.model;
  const size = { batch: 1, seqLen: capacity, layers: config.numLayers, kvHeads: config.numKvHeads };
  return kvCacheBytes({ ...size, headDim: headDim(config), bytesPerElement: 4 });
}

function droppedNotice(event: Extract<ChatEvent | StoryEvent, { type: 'dropped' | 'dropped-text' }>): string {
  return event.type === 'dropped'
    ? `The context was full: the oldest ${event.turns} turn${event.turns === 1 ? '' : 's'} left it.`
    : `The context was full: the oldest ${event.tokens} tokens of the story left it.`;
}

/** Stops the reply being generated, and resolves once it has ended (however it ended). */
function settled(): Promise<void> {
  running?.abort();
  return current.catch(() => {});
}

function send(turn: number, text: string, settings: Settings): Promise<void> {
  const previous = settled();
  const controller = new AbortController();
  running = controller;
  current = previous.then(() => generate(turn, text, settings, controller.signal));
  return current;
}

async function generate(turn: number, text: string, settings: Settings, signal: AbortSignal): Promise<void> {
  if (conversation === undefined) throw new Error('no model is loaded; load one before sending a message');
  const { maxNewTokens, ...sampling } = settings;
  const events = conversation.send(text, {
    sampling: { ...sampling, topLogprobs: TOP_ALTERNATIVES },
    stop: { maxNewTokens },
    signal,
  });
  const { tokenizer } = generator!;
  for await (const event of events) {
    if (event.type === 'dropped' || event.type === 'dropped-text') {
      report({ type: 'dropped', turn, notice: droppedNotice(event) });
    } else if (event.type === 'token') {
      const alternatives = (event.top ?? []).map(({ token, logprob }) => ({
        text: tokenizer.decode([token]),
        probability: Math.exp(logprob),
      }));
      report({ type: 'token', turn, text: event.text, alternatives });
    } else {
      const { stats } = event;
      const { timings } = stats;
      replyTokens = [...stats.promptTokens, ...stats.tokens];
      report({
        type: 'done',
        turn,
        text: event.text,
        stats: {
          stopReason: stats.stopReason,
          promptTokens: stats.promptTokens.length,
          reusedTokens: stats.reusedTokens,
          prefilledTokens: stats.promptTokens.length - stats.reusedTokens,
          generatedTokens: stats.tokens.length,
          timeToFirstTokenMs: timings.timeToFirstTokenMs,
          prefillTokensPerSecond: timings.prefillTokensPerSecond,
          decodeTokensPerSecond: timings.decodeTokensPerSecond,
          contextUsed: conversation.cachedTokens.length,
          contextCapacity: conversation.capacity,
          cacheBytes: cacheBytes(conversation.capacity),
        },
      });
    }
    await nextTask();
  }
}

/** Once the reply being generated has ended, the attention map of the conversation it left. */
async function reportAttention(layer: number, head: number): Promise<void> {
  await current.catch(() => {});
  if (generator === undefined) throw new Error('no model is loaded; load one to see its attention');
  const map = await attentionOf(generator, replyTokens, layer, head);
  self.postMessage({ type: 'attention', map } satisfies Report, [map.probs.buffer]);
}

async function handle(request: Request): Promise<void> {
  switch (request.type) {
    case 'init':
      return startBackend(request.backend);
    case 'load':
      return load(request.files);
    case 'reset':
      await settled();
      mode = request.mode;
      system = request.system;
      return newConversation();
    case 'send':
      return send(request.turn, request.text, request.settings);
    case 'stop':
      running?.abort();
      return;
    case 'attention':
      return reportAttention(request.layer, request.head);
  }
}

self.onmessage = (event: MessageEvent<Request>) => {
  handle(event.data).catch((error: unknown) => report({ type: 'error', message: errorText(error) }));
};
