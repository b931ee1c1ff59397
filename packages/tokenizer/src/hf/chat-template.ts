import { Template } from '@huggingface/jinja';
import type { ChatMessage, ChatPromptOptions } from '../chat-template';
import { jsonFail, parseJson, readArray, readObject, readString } from '../formats/json-read';
import type { Tokenizer } from '../tokenizer';

export interface HfChatTemplateOptions {
  /** Names the file in error messages. Default `'tokenizer_config.json'`. */
  readonly source?: string;
  /** Which template of a named list (`[{ "name", "template" }]`) to use. Default `"default"`. */
  readonly name?: string;
}

/** The config keys whose token text templates see by the same name (as transformers passes them). */
const TOKEN_KEYS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

/** A token named in tokenizer_config.json: a string, `{ "content": ... }`, or null. */
function tokenText(value: unknown, source: string, key: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  return readString(readObject(value, source, key).content, source, `${key}.content`);
}

function readTemplate(value: unknown, name: string, source: string): string {
  if (typeof value === 'string') return value;
  const entries = readArray(value, source, 'chat_template').map((entry, index) => {
    const item = readObject(entry, source, `chat_template[${index}]`);
    return {
      name: readString(item.name, source, `chat_template[${index}].name`),
      template: readString(item.template, source, `chat_template[${index}].template`),
    };
  });
  const found = entries.find((entry) => entry.name === name);
  if (found === undefined) {
    jsonFail(
      source,
      'chat_template',
      `a template named ${JSON.stringify(name)} (or pass another name)`,
      entries.map((e) => e.name),
    );
  }
  return found.template;
}

/**
 * A model's own chat template, from the `chat_template` of its tokenizer_config.json (a Jinja template, rendered
 * with `@huggingface/jinja` as transformers.js does), with `messages`, `add_generation_prompt` and the config's
 * `bos_token`, `eos_token`, ... in scope.
 */
export class HfChatTemplate {
  private readonly template: Template;

  private constructor(
    readonly text: string,
    private readonly tokens: Readonly<Record<string, string>>,
    private readonly source: string,
  ) {
    try {
      this.template = new Template(text);
    } catch (error) {
      throw new Error(
        `${source}: key "chat_template": not a template @huggingface/jinja can parse (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /** The template of a tokenizer_config.json (parsed or as text), or undefined when it has none. */
  static fromConfig(config: unknown, options: HfChatTemplateOptions = {}): HfChatTemplate | undefined {
    const source = options.source ?? 'tokenizer_config.json';
    const root = readObject(
      typeof config === 'string' ? parseJson(config, source) : config,
      source,
      '(root)',
    );
    if (root.chat_template === undefined || root.chat_template === null) return undefined;
    const tokens: Record<string, string> = {};
    for (const key of TOKEN_KEYS) {
      const text = tokenText(root[key], source, key);
      if (text !== undefined) tokens[key] = text;
    }
    return new HfChatTemplate(
      readTemplate(root.chat_template, options.name ?? 'default', source),
      tokens,
      source,
    );
  }

  /** The prompt text; `addGenerationPrompt` (default true) ends it with the opening of an assistant turn. */
  render(messages: readonly ChatMessage[], options: ChatPromptOptions = {}): string {
    try {
      return this.template.render({
        messages: messages.map(({ role, content }) => ({ role, content })),
        add_generation_prompt: options.addGenerationPrompt ?? true,
        ...this.tokens,
      });
    } catch (error) {
      throw new Error(
        `${this.source}: chat_template failed on these messages (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /**
   * Token ids of the prompt: the rendered text with its special-token text parsed. A message whose content holds
   * special-token text is refused, so typed text cannot forge a turn.
   */
  encode(tokenizer: Tokenizer, messages: readonly ChatMessage[], options: ChatPromptOptions = {}): number[] {
    messages.forEach((message, index) => {
      const special = tokenizer.specialTokens.find((token) => message.content.includes(token.text));
      if (special !== undefined) {
        throw new Error(
          `chat template: message ${index} (${message.role}) contains the special token text ` +
            `${JSON.stringify(special.text)}; remove it (only the template may insert control tokens)`,
        );
      }
    });
    return tokenizer.encode(this.render(messages, options), { specialTokens: 'parse' });
  }
}
