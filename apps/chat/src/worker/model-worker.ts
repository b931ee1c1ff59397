/// <reference lib="webworker" />

import { WebGPUBackend } from '@loom/backend-webgpu';
import { kvCacheBytes } from '@loom/kvcache';
import { describeConfig, transformerFromTensors } from '@loom/models';
import { headDim, parameterCount } from '@loom/nn';
import { type ChatEvent, type ChatSession, TextGenerator } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import type { Tokenizer } from '@loom/tokenizer';
import type { HistoryMessage, ModelFile, PromptMode, Report, Request, WorkerOptions } from '../protocol';
import type { Settings } from '../settings';
import { attentionOf } from './attention';
import { cpuBackend, type PickedBackend, pickBackend } from './backend';
import { type BackendLimits, checkModelFits, heldWeightBytes } from './memory-fit';
import { readModelFiles } from './model-files';
import { nextTask } from './next-task';
import { type StoryEvent, StorySession } from './story-session';

declare const self: DedicatedWorkerGlobalScope;

/** The alternatives shown when hovering a generated token. */
const TOP_ALTERNATIVES = 5;

/** How long a failed WebGPU step waits for `device.lost` to say whether the device is gone. */
const LOST_WAIT_MS = 2000;

let options: WorkerOptions = { backend: 'auto', testHooks: false };
let backend: Promise<PickedBackend> | undefined;
let files: readonly ModelFile[] = [];
/** The positions the cache holds, as the page asked (undefined: the model's maxSeqLen). */
let context: number | undefined;
/** The conversation so far, whole turns: a new conversation (a reload onto another backend) starts from it. */
let history: readonly HistoryMessage[] = [];
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

function startBackend(): void {
  backend = pickBackend(options.backend);
  void backend.then(({ info, lost }) => {
    report({ type: 'backend', backend: info });
    void lost.then(async (reason) => {
      backend = cpuBackend(`The WebGPU device was lost (${reason}); running on the CPU from now on.`);
      report({ type: 'backend', backend: (await backend).info });
      // The model and the conversation so far move to the CPU; the next message prefills the history there.
      if (generator !== undefined) {
        await load(files, context).catch((error: unknown) =>
          report({ type: 'error', message: errorText(error) }),
        );
      }
    });
  });
}

/** What the backend lets a model take: the adapter's buffer limits on WebGPU, and the page's memory limit. */
function limitsOf({ backend: device, info }: PickedBackend): BackendLimits {
  const { memoryLimit, adapterLimit } = options;
  const total =
    memoryLimit === undefined
      ? {}
      : { totalBytes: memoryLimit, totalLimit: 'the memory limit (?memory-limit)' };
  if (!(device instanceof WebGPUBackend)) return { backend: info.name, ...total };
  const { maxBufferSize, maxStorageBufferBindingSize } = device.limits;
  const [name, bytes] =
    maxStorageBufferBindingSize <= maxBufferSize
      ? ['maxStorageBufferBindingSize', maxStorageBufferBindingSize]
      : ['maxBufferSize', maxBufferSize];
  const capped = adapterLimit !== undefined && adapterLimit < bytes;
  return {
    backend: 'webgpu',
    tensorBytes: capped ? adapterLimit : bytes,
    tensorLimit: `the WebGPU adapter's ${name}${capped ? ' (capped by ?adapter-limit)' : ''}`,
    ...total,
  };
}

function freeModel(): void {
  conversation?.dispose();
  conversation = undefined;
  generator?.model.dispose();
  generator = undefined;
}

/** A new conversation over the model, continuing `history` (prefilled with the next message). */
function newConversation(): void {
  conversation?.dispose();
  conversation = undefined;
  replyTokens = [];
  if (generator === undefined) return;
  const capacity = context ?? generator.model.config.maxSeqLen;
  conversation =
    mode === 'story'
      ? new StorySession(generator, { capacity, history })
      : generator.chat({
          template: mode,
          capacity,
          ...(system.trim() ? { system } : {}),
          // The chat keeps its answers trimmed; the restored ones are too, so they render as they did.
          history: history.map(({ role, text }) => ({ role, content: role === 'user' ? text : text.trim() })),
        });
}

async function load(picked: readonly ModelFile[], positions: number | undefined): Promise<void> {
  await settled();
  const chosen = await (backend ?? Promise.reject(new Error('the worker was not started')));
  const { loaded, tokenizer, source } = await readModelFiles(picked);
  // Checked before the weights or the cache are allocated: a model too large is refused with what to do.
  const limits = limitsOf(chosen);
  checkModelFits(loaded, source, positions ?? loaded.config.maxSeqLen, limits);
  freeModel();
  setBackend(chosen.backend);
  const model = transformerFromTensors(loaded, source);
  const weightBytes = heldWeightBytes(loaded);
  const { tensorBytes, totalBytes } = limits;
  try {
    generator = new TextGenerator(model, tokenizer, {
      limits: {
        ...(tensorBytes === undefined ? {} : { tensorBytes }),
        ...(totalBytes === undefined ? {} : { totalBytes: totalBytes - weightBytes }),
      },
    });
  } catch (error) {
    model.dispose();
    throw error;
  }
  files = picked;
  context = positions;
  mode = modeFor(tokenizer);
  newConversation();
  const parameters = parameterCount(loaded.config);
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

/** The reason the WebGPU device of `picked` was lost, if it is lost within LOST_WAIT_MS; never on the CPU. */
async function lostReason(picked: PickedBackend): Promise<string | undefined> {
  if (picked.info.name !== 'webgpu') return undefined;
  const waited = new Promise<undefined>((resolve) => setTimeout(resolve, LOST_WAIT_MS));
  return Promise.race([picked.lost, waited]);
}

async function generate(turn: number, text: string, settings: Settings, signal: AbortSignal): Promise<void> {
  if (conversation === undefined) throw new Error('no model is loaded; load one before sending a message');
  const picked = await backend!;
  let lost: string | undefined;
  void picked.lost.then((reason) => {
    lost = reason;
  });
  let reply = '';
  try {
    const onText = (piece: string) => {
      reply += piece;
    };
    await streamReply(turn, text, settings, signal, onText, () => lost !== undefined);
  } catch (error) {
    lost ??= await lostReason(picked);
    if (lost === undefined) throw error;
  } finally {
    // The page keeps the turn, ended or stopped, and so does the history a reload continues from.
    history = [...history, { role: 'user', text }, { role: 'assistant', text: reply }];
  }
  if (lost !== undefined) {
    report({
      type: 'interrupted',
      turn,
      notice:
        `The WebGPU device was lost while the model was writing (${lost}), so the reply stops here. ` +
        'The model moves to the CPU; your next message continues the conversation there.',
    });
  }
}

/** Streams one turn's reply to the page, each piece of text also to `onText`; no `done` once `interrupted()`. */
async function streamReply(
  turn: number,
  text: string,
  settings: Settings,
  signal: AbortSignal,
  onText: (text: string) => void,
  interrupted: () => boolean,
): Promise<void> {
  if (conversation === undefined) throw new Error('no model is loaded; load one before sending a message');
  const { maxNewTokens, ...sampling } = settings;
  const events = conversation.send(text, {
    sampling: { ...sampling, topLogprobs: TOP_ALTERNATIVES },
    stop: { maxNewTokens },
    signal,
  });
  const { tokenizer } = generator!;
  for await (const event of events) {
    onText(event.type === 'token' || event.type === 'done' ? event.text : '');
    if (event.type === 'dropped' || event.type === 'dropped-text') {
      report({ type: 'dropped', turn, notice: droppedNotice(event) });
    } else if (event.type === 'token') {
      const alternatives = (event.top ?? []).map(({ token, logprob }) => ({
        text: tokenizer.decode([token]),
        probability: Math.exp(logprob),
      }));
      report({ type: 'token', turn, text: event.text, alternatives });
    } else {
      if (interrupted()) return;
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

/** Test hook: destroys the WebGPU device, which then reports itself lost as a failing GPU would. */
async function loseDevice(): Promise<void> {
  if (!options.testHooks) throw new Error('lose-device is a test hook: open the page with ?test-hooks');
  const { backend: device } = await backend!;
  if (!(device instanceof WebGPUBackend)) throw new Error('lose-device: the worker is not on WebGPU');
  device.device.destroy();
}

async function handle(request: Request): Promise<void> {
  switch (request.type) {
    case 'init':
      options = request.options;
      return startBackend();
    case 'load':
      return load(request.files, request.context);
    case 'reset':
      await settled();
      mode = request.mode;
      system = request.system;
      history = request.history;
      return newConversation();
    case 'send':
      return send(request.turn, request.text, request.settings);
    case 'stop':
      running?.abort();
      return;
    case 'attention':
      return reportAttention(request.layer, request.head);
    case 'lose-device':
      return loseDevice();
  }
}

self.onmessage = (event: MessageEvent<Request>) => {
  handle(event.data).catch((error: unknown) => report({ type: 'error', message: errorText(error) }));
};
