import { describe, expect, it } from 'vitest';
import {
  CharTokenizer,
  encodeChat,
  loadTokenizer,
  renderChat,
  StreamDecoder,
  tokenizerFromTiktoken,
} from '../src/index';
import { randomText, readData, seededRandom } from './helpers';

const gpt2 = tokenizerFromTiktoken(readData('gpt2/r50k_base.tiktoken').toString('utf8'));
const tok512 = loadTokenizer(readData('models/tok512.bin'));

describe('streaming decoder', () => {
  it('holds back the bytes of a character split across tokens', () => {
    const ids = gpt2.encode('🧑🏿‍🚀');
    expect(ids.length).toBeGreaterThan(3);
    const decoder = new StreamDecoder(gpt2);
    const chunks = ids.map((id) => decoder.push(id));
    expect(chunks[0]).toBe('');
    expect(chunks.join('') + decoder.flush()).toBe('🧑🏿‍🚀');
    for (const chunk of chunks) expect(chunk).not.toContain('\ufffd');
  });

  it('emits the same text as decode, piece by piece, for random strings', () => {
    const random = seededRandom(60);
    for (let i = 0; i < 500; i++) {
      const text = randomText(random, 40);
      for (const tok of [gpt2, tok512]) {
        const ids = tok.encode(text, { bos: tok === tok512 });
        const decoder = new StreamDecoder(tok);
        let streamed = '';
        for (const id of ids) {
          const chunk = decoder.push(id);
          expect(chunk).not.toContain('\ufffd');
          streamed += chunk;
        }
        expect(streamed + decoder.flush()).toBe(tok.decode(ids));
      }
    }
  });

  it('turns an unfinished character into U+FFFD at flush', () => {
    const decoder = new StreamDecoder(tok512);
    expect(decoder.push(0xe6 + 3)).toBe('');
    expect(decoder.flush()).toBe('\ufffd');
    expect(decoder.push(0xe6 + 3) + decoder.push(0x41 + 3)).toBe('\ufffdA');
  });
});

describe('chat templates', () => {
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi <|im_end|></s>' },
    { role: 'assistant', content: 'Hello.' },
    { role: 'user', content: 'Bye' },
  ] as const;

  it('renders llama2 turns with BOS/EOS parts and the system block in the first turn', () => {
    expect(renderChat('llama2', messages)).toEqual([
      { kind: 'bos', optional: false },
      { kind: 'text', text: '[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi <|im_end|></s> [/INST] Hello. ' },
      { kind: 'eos', optional: false },
      { kind: 'bos', optional: false },
      { kind: 'text', text: '[INST] Bye [/INST]' },
    ]);
  });

  it('encodes message content as plain text, so users cannot inject control tokens', () => {
    const ids = encodeChat(tok512, 'llama2', messages);
    expect(ids.filter((id) => id === 2)).toHaveLength(1);
    expect(ids.filter((id) => id === 1)).toHaveLength(2);
    expect(ids[0]).toBe(1);
    const chatml = CharTokenizer.fromCorpus('abcdefghijklmnopqrstuvwxyzHBIE.<>|_/ \n', {
      unknown: 'skip',
      specialTokens: ['<|im_start|>', '<|im_end|>'],
    });
    const end = chatml.specialTokenId('<|im_end|>')!;
    const chatIds = encodeChat(chatml, 'chatml', messages.slice(1));
    expect(chatIds.filter((id) => id === end)).toHaveLength(3);
    expect(chatml.decode(chatIds)).toBe(
      '<|im_start|>user\nHi <|im_end|></s><|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n' +
        '<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('renders the plain template with an optional BOS and a generation prompt', () => {
    const ids = encodeChat(gpt2, 'plain', [{ role: 'user', content: 'Hello' }]);
    expect(ids[0]).toBe(50256);
    expect(gpt2.decode(ids.slice(1))).toBe('User: Hello\nAssistant:');
    const noBos = CharTokenizer.fromCorpus('UserAstanio: Hel\n');
    expect(noBos.decode(encodeChat(noBos, 'plain', [{ role: 'user', content: 'Hello' }]))).toBe(
      'User: Hello\nAssistant:',
    );
  });

  it('explains what is wrong with a conversation or a tokenizer', () => {
    expect(() => encodeChat(gpt2, 'chatml', [{ role: 'user', content: 'x' }])).toThrow(
      'chat template chatml: the tokenizer has no "<|im_start|>" token',
    );
    expect(() => renderChat('llama2', [{ role: 'assistant', content: 'x' }])).toThrow(
      'message 0 has role assistant; expected user',
    );
  });
});
