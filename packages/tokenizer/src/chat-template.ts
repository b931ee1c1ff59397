import type { Tokenizer } from './tokenizer';

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
}

/**
 * The prompt formats Loom knows:
 * - `plain`: `User: ...` / `Assistant: ...` lines after BOS (when the tokenizer has one), for models without chat
 *   tokens (TinyStories, a model you trained);
 * - `llama2`: Llama 2 chat, `<s>[INST] <<SYS>>...<</SYS>> user [/INST] answer </s>`, one BOS/EOS per turn;
 * - `chatml`: `<|im_start|>role\ncontent<|im_end|>\n`, needs those two special tokens.
 */
export type ChatTemplateName = 'plain' | 'llama2' | 'chatml';

/** A prompt as a list of parts: text (always encoded as plain text) or a special token. */
export type PromptPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bos' | 'eos'; readonly optional: boolean }
  | { readonly kind: 'special'; readonly text: string };

export interface ChatPromptOptions {
  /** End with the opening of an assistant turn, for the model to complete (default true). */
  readonly addGenerationPrompt?: boolean;
}

const text = (value: string): PromptPart => ({ kind: 'text', text: value });

function renderPlain(messages: readonly ChatMessage[], generate: boolean): PromptPart[] {
  const label: Record<ChatRole, string> = { system: 'System', user: 'User', assistant: 'Assistant' };
  const lines = messages.map((message) => `${label[message.role]}: ${message.content}\n`).join('');
  return [{ kind: 'bos', optional: true }, text(generate ? `${lines}Assistant:` : lines)];
}

function renderLlama2(messages: readonly ChatMessage[], generate: boolean): PromptPart[] {
  let turns = messages;
  let system = '';
  if (turns[0]?.role === 'system') {
    system = `<<SYS>>\n${turns[0].content}\n<</SYS>>\n\n`;
    turns = turns.slice(1);
  }
  const parts: PromptPart[] = [];
  turns.forEach((message, index) => {
    const expected: ChatRole = index % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected) {
      throw new Error(
        `chat template llama2: message ${index} has role ${message.role}; expected ${expected} (an optional system message, then user and assistant alternating)`,
      );
    }
  });
  for (let i = 0; i < turns.length; i += 2) {
    const user = `${i === 0 ? system : ''}${turns[i].content.trim()}`;
    const answer = turns[i + 1];
    if (answer === undefined) {
      if (!generate)
        throw new Error(
          'chat template llama2: the last user message has no answer; use addGenerationPrompt: true',
        );
      parts.push({ kind: 'bos', optional: false }, text(`[INST] ${user} [/INST]`));
    } else {
      parts.push({ kind: 'bos', optional: false }, text(`[INST] ${user} [/INST] ${answer.content.trim()} `), {
        kind: 'eos',
        optional: false,
      });
    }
  }
  return parts;
}

function renderChatml(messages: readonly ChatMessage[], generate: boolean): PromptPart[] {
  const start: PromptPart = { kind: 'special', text: '<|im_start|>' };
  const end: PromptPart = { kind: 'special', text: '<|im_end|>' };
  const parts = messages.flatMap((message) => [
    start,
    text(`${message.role}\n${message.content}`),
    end,
    text('\n'),
  ]);
  return generate ? [...parts, start, text('assistant\n')] : parts;
}

/** The parts of a chat prompt in a given format. */
export function renderChat(
  template: ChatTemplateName,
  messages: readonly ChatMessage[],
  options: ChatPromptOptions = {},
): PromptPart[] {
  const generate = options.addGenerationPrompt ?? true;
  switch (template) {
    case 'plain':
      return renderPlain(messages, generate);
    case 'llama2':
      return renderLlama2(messages, generate);
    case 'chatml':
      return renderChatml(messages, generate);
  }
}

/**
 * Token ids of a chat prompt. Message content is always encoded as plain text, so a user typing `<|im_end|>` or
 * `</s>` cannot forge a turn; only the template inserts special tokens, by id.
 */
export function encodeChat(
  tokenizer: Tokenizer,
  template: ChatTemplateName,
  messages: readonly ChatMessage[],
  options: ChatPromptOptions = {},
): number[] {
  const ids: number[] = [];
  for (const part of renderChat(template, messages, options)) {
    if (part.kind === 'text') {
      for (const id of tokenizer.encode(part.text)) ids.push(id);
      continue;
    }
    const id = part.kind === 'special' ? tokenizer.specialTokenId(part.text) : tokenizer[part.kind];
    if (id === undefined) {
      if (part.kind !== 'special' && part.optional) continue;
      const name = part.kind === 'special' ? JSON.stringify(part.text) : part.kind.toUpperCase();
      throw new Error(
        `chat template ${template}: the tokenizer has no ${name} token; use a tokenizer that has it or another template`,
      );
    }
    ids.push(id);
  }
  return ids;
}
