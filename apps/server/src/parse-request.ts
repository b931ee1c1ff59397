import { randomInt } from 'node:crypto';
import { encodePrompt } from '@loom/runtime';
import { MAX_SEED, type SamplerConfig } from '@loom/sampler';
import {
  type ChatMessage,
  type ChatRole,
  type ChatTemplateName,
  encodeChat,
  type Tokenizer,
} from '@loom/tokenizer';
import { ApiError } from './api-error';
import {
  type Body,
  describeJson,
  logitBias,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalObject,
  outOfRange,
  stopStrings,
  wrongType,
} from './fields';

/** What the server knows about its model when it reads a request. */
export interface ModelInfo {
  readonly id: string;
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplateName;
  readonly maxSeqLen: number;
}

/** One generation, as the batcher runs it. */
export interface GenerationRequest {
  readonly prompt: readonly number[];
  readonly sampling: SamplerConfig;
  readonly stopStrings: readonly string[];
  /** Tokens to generate at most; undefined: until the context is full. */
  readonly maxTokens: number | undefined;
  /** Alternatives to report with each token's log-probability; undefined: no log-probabilities. */
  readonly topLogprobs: number | undefined;
}

/** A checked request of either endpoint. */
export interface ParsedRequest {
  readonly kind: 'chat' | 'completion';
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly generation: GenerationRequest;
}

/** The request body as an object; anything else is a 400 naming what came. */
export function parseBody(text: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ApiError(
      400,
      'invalid_request_error',
      'invalid_json',
      `the request body is not valid JSON (${reason})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(
      400,
      'invalid_request_error',
      'invalid_json',
      `the request body must be a JSON object, got ${describeJson(value)}`,
    );
  }
  return value as Body;
}

function checkModel(body: Body, info: ModelInfo): void {
  const model = body.model;
  if (model === undefined) {
    throw ApiError.invalid(
      'model',
      'missing_required_parameter',
      `model is required; this server has ${JSON.stringify(info.id)}`,
    );
  }
  if (typeof model !== 'string') throw wrongType('model', 'a string', model);
  if (model !== info.id) {
    throw new ApiError(
      404,
      'not_found_error',
      'model_not_found',
      `the model ${JSON.stringify(model)} does not exist here; this server has ${JSON.stringify(info.id)} (see GET /v1/models)`,
      'model',
    );
  }
}

/** Parameters this server does not implement, refused when set to anything but their default. */
function refuseUnsupported(body: Body): void {
  const n = optionalInteger(body, 'n', 1, Number.MAX_SAFE_INTEGER);
  if (n !== undefined && n !== 1) {
    throw ApiError.invalid(
      'n',
      'unsupported_value',
      `n must be 1: this server generates one choice per request, got ${n}; send ${n} requests instead`,
    );
  }
  const bestOf = optionalInteger(body, 'best_of', 1, Number.MAX_SAFE_INTEGER);
  if (bestOf !== undefined && bestOf !== 1) {
    throw ApiError.invalid('best_of', 'unsupported_value', `best_of must be 1 here, got ${bestOf}`);
  }
  if (optionalBoolean(body, 'echo', false)) {
    throw ApiError.invalid(
      'echo',
      'unsupported_value',
      'echo is not supported; the prompt is not repeated in the answer',
    );
  }
  for (const param of ['suffix', 'tools', 'functions']) {
    const value = body[param];
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
      throw ApiError.invalid(
        param,
        'unsupported_value',
        `${param} is not supported by this server; leave it out`,
      );
    }
  }
}

function sampling(body: Body, vocabSize: number): SamplerConfig {
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP === 0) throw outOfRange('top_p', 'a number in (0, 1]', topP);
  return {
    temperature: optionalNumber(body, 'temperature', 0, 2) ?? 1,
    topP,
    frequencyPenalty: optionalNumber(body, 'frequency_penalty', -2, 2),
    presencePenalty: optionalNumber(body, 'presence_penalty', -2, 2),
    logitBias: logitBias(body, vocabSize),
    seed: optionalInteger(body, 'seed', 0, MAX_SEED) ?? randomInt(2 ** 31),
  };
}

function maxTokens(body: Body): number | undefined {
  const limit = Number.MAX_SAFE_INTEGER;
  return (
    optionalInteger(body, 'max_completion_tokens', 1, limit) ?? optionalInteger(body, 'max_tokens', 1, limit)
  );
}

/** Throws unless the prompt and the tokens asked for fit the model's context. */
function checkContext(
  param: string,
  prompt: readonly number[],
  max: number | undefined,
  maxSeqLen: number,
): void {
  if (prompt.length === 0)
    throw ApiError.invalid(
      param,
      'invalid_value',
      `${param} is empty; give at least one token to continue from`,
    );
  const asked = prompt.length + (max ?? 0);
  if (asked > maxSeqLen) {
    const parts = max === undefined ? '' : ` (${prompt.length} in the ${param}, ${max} in the completion)`;
    throw ApiError.invalid(
      param,
      'context_length_exceeded',
      `this model's maximum context length is ${maxSeqLen} tokens, but you requested ${asked} tokens${parts}; shorten the ${param} or lower max_tokens`,
    );
  }
}

function streamOptions(body: Body, stream: boolean): boolean {
  const options = optionalObject(body, 'stream_options');
  if (options === undefined) return false;
  if (!stream)
    throw ApiError.invalid(
      'stream_options',
      'invalid_value',
      'stream_options is only allowed with stream: true',
    );
  const include = options.include_usage;
  if (include !== undefined && typeof include !== 'boolean') {
    throw wrongType('stream_options.include_usage', 'true or false', include);
  }
  return include === true;
}

const ROLES: Readonly<Record<string, ChatRole>> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
};

function messageContent(param: string, content: unknown): string {
  if (typeof content === 'string') return content;
  const parts = Array.isArray(content) ? content : undefined;
  const texts = parts?.map((part: unknown) => {
    const p = part as Body | null;
    return typeof p === 'object' && p !== null && p.type === 'text' && typeof p.text === 'string'
      ? p.text
      : undefined;
  });
  if (texts === undefined || texts.some((t) => t === undefined)) {
    throw wrongType(param, 'a string or an array of {"type": "text", "text": string} parts', content);
  }
  return texts.join('');
}

function chatMessages(body: Body): ChatMessage[] {
  const messages = body.messages;
  if (messages === undefined)
    throw ApiError.invalid(
      'messages',
      'missing_required_parameter',
      'messages is required: an array of {role, content}',
    );
  if (!Array.isArray(messages)) throw wrongType('messages', 'an array of {role, content}', messages);
  if (messages.length === 0)
    throw ApiError.invalid('messages', 'invalid_value', 'messages is empty; give at least one message');
  return messages.map((message: unknown, i) => {
    const param = `messages[${i}]`;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw wrongType(param, 'an object {role, content}', message);
    }
    const { role, content } = message as Body;
    const chatRole = typeof role === 'string' ? ROLES[role] : undefined;
    if (chatRole === undefined) {
      throw outOfRange(`${param}.role`, 'one of system, developer, user, assistant', role);
    }
    return { role: chatRole, content: messageContent(`${param}.content`, content) };
  });
}

/** Reads a POST /v1/chat/completions body; every problem is an ApiError naming the parameter. */
export function parseChatRequest(body: Body, info: ModelInfo): ParsedRequest {
  checkModel(body, info);
  const messages = chatMessages(body);
  refuseUnsupported(body);
  const stream = optionalBoolean(body, 'stream', false);
  const wantLogprobs = optionalBoolean(body, 'logprobs', false);
  const top = optionalInteger(body, 'top_logprobs', 0, 20);
  if (top !== undefined && !wantLogprobs) {
    throw ApiError.invalid('top_logprobs', 'invalid_value', 'top_logprobs needs logprobs: true');
  }
  const generation = generationOf(
    body,
    info,
    'messages',
    () => {
      try {
        return encodeChat(info.tokenizer, info.template, messages);
      } catch (error) {
        throw ApiError.invalid(
          'messages',
          'invalid_value',
          error instanceof Error ? error.message : String(error),
        );
      }
    },
    wantLogprobs ? (top ?? 0) : undefined,
  );
  return { kind: 'chat', stream, includeUsage: streamOptions(body, stream), generation };
}

function completionPrompt(body: Body, info: ModelInfo): number[] {
  const prompt = body.prompt;
  if (prompt === undefined)
    throw ApiError.invalid(
      'prompt',
      'missing_required_parameter',
      'prompt is required: a string or an array of token ids',
    );
  const text =
    Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string' ? prompt[0] : prompt;
  if (typeof text === 'string') return encodePrompt(info.tokenizer, text);
  const { vocabSize } = info.tokenizer;
  if (Array.isArray(text) && text.every((id) => Number.isInteger(id))) {
    const bad = text.find((id: number) => id < 0 || id >= vocabSize);
    if (bad !== undefined)
      throw outOfRange('prompt', `token ids in [0, ${vocabSize}) (the model's vocabulary)`, bad);
    return text as number[];
  }
  throw wrongType('prompt', 'a string, or an array of token ids (one prompt per request)', prompt);
}

/** Reads a POST /v1/completions body; every problem is an ApiError naming the parameter. */
export function parseCompletionRequest(body: Body, info: ModelInfo): ParsedRequest {
  checkModel(body, info);
  refuseUnsupported(body);
  const stream = optionalBoolean(body, 'stream', false);
  const logprobs = optionalInteger(body, 'logprobs', 0, 5);
  const generation = generationOf(body, info, 'prompt', () => completionPrompt(body, info), logprobs);
  return { kind: 'completion', stream, includeUsage: streamOptions(body, stream), generation };
}

function generationOf(
  body: Body,
  info: ModelInfo,
  promptParam: string,
  encode: () => number[],
  topLogprobs: number | undefined,
): GenerationRequest {
  const config = sampling(body, info.tokenizer.vocabSize);
  const stops = stopStrings(body);
  const max = maxTokens(body);
  const prompt = encode();
  checkContext(promptParam, prompt, max, info.maxSeqLen);
  return {
    prompt,
    sampling: { ...config, topLogprobs: topLogprobs ?? 0 },
    stopStrings: stops,
    maxTokens: max,
    topLogprobs,
  };
}
