import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Tokenizer, tokenizerFromTiktoken } from '@loom/tokenizer';
import { encode as gptTokenizerEncode } from 'gpt-tokenizer/encoding/r50k_base';
import { Tiktoken } from 'js-tiktoken/lite';
import r50kRanks from 'js-tiktoken/ranks/r50k_base';
import { timeMedian } from '../stats';
import type { Row, Suite, SuiteResult } from '../suite';

/** The shared data folder: `../shared/data` beside the repository (as CI has it), or `shared/data` inside it. */
function sharedData(): string {
  const candidates = ['../../../../../shared/data/', '../../../../shared/data/'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  const found = candidates.find((dir) => existsSync(`${dir}tinyshakespeare.txt`));
  if (found === undefined) {
    throw new Error(
      `bench tokenizer: shared data not found (looked for tinyshakespeare.txt in ${candidates.join(' and ')}); ` +
        'put the shared data folder at ../shared/data beside the repository',
    );
  }
  return found;
}

/** A deterministic mixed-script text (English, CJK, Arabic, Cyrillic, Devanagari, emoji, code) of about `size` chars. */
function mixedScriptText(size: number): string {
  const sentences = [
    "The quick brown fox jumps over the lazy dog, and it's quite fast!",
    '我们今天去公园散步，天气非常好。',
    '東京の天気は晴れです。明日は雨が降るでしょう。',
    '한국어 문장은 띄어쓰기를 사용합니다.',
    'مرحبا بالعالم، كيف حالك اليوم؟',
    'Привет, мир! Как дела сегодня?',
    'नमस्ते दुनिया, आज मौसम अच्छा है।',
    'Emoji: 👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🇯🇵 flag, 🎉🎉🎉!',
    'const total = items.reduce((sum, x) => sum + x.price * 1.2, 0);\n',
    'for (let i = 0; i < 10; i++) {\n    console.log("value", i);\n}\n',
    'Ünïcödé àccents — “quotes” and ‘apostrophes’ … ellipsis.',
    '   indented line with    several   spaces\r\n\ttab\n\n',
  ];
  let seed = 12345;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const parts: string[] = [];
  let length = 0;
  while (length < size) {
    const sentence = `${sentences[Math.floor(random() * sentences.length)]} ${Math.floor(random() * 100000)} `;
    parts.push(sentence);
    length += sentence.length;
  }
  return parts.join('');
}

interface Contender {
  readonly name: string;
  readonly encode: (text: string) => number[];
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

export const tokenizerSuite: Suite = {
  name: 'tokenizer',
  description:
    'GPT-2 encode MB/s: @loom/tokenizer vs gpt-tokenizer vs js-tiktoken (TinyShakespeare, mixed script)',
  flags: {},
  usage: '',
  async run(): Promise<SuiteResult> {
    const data = sharedData();
    const loadStart = performance.now();
    const loom: Tokenizer = tokenizerFromTiktoken(readFileSync(`${data}gpt2/r50k_base.tiktoken`, 'utf8'), {
      source: 'r50k_base.tiktoken',
    });
    const loadMs = performance.now() - loadStart;
    const tiktoken = new Tiktoken(r50kRanks);
    const contenders: Contender[] = [
      { name: '@loom/tokenizer', encode: (text) => loom.encode(text) },
      { name: 'gpt-tokenizer', encode: (text) => gptTokenizerEncode(text) },
      { name: 'js-tiktoken', encode: (text) => tiktoken.encode(text, [], []) },
    ];
    const texts = [
      { name: 'TinyShakespeare', text: readFileSync(`${data}tinyshakespeare.txt`, 'utf8') },
      { name: 'mixed script', text: mixedScriptText(500_000) },
    ];
    const rows: Row[] = [];
    const notes: string[] = [`@loom/tokenizer loaded r50k_base.tiktoken in ${loadMs.toFixed(0)} ms`];
    for (const { name, text } of texts) {
      const megabytes = new TextEncoder().encode(text).length / 1e6;
      const reference = contenders[0].encode(text);
      const row: Record<string, string | number> = { text: name, MB: megabytes, tokens: reference.length };
      let bestOther = 0;
      for (const contender of contenders) {
        if (!sameIds(contender.encode(text), reference))
          notes.push(`${contender.name} disagrees with @loom/tokenizer on ${name}`);
        const ms = await timeMedian(() => void contender.encode(text), 7, 2);
        const rate = megabytes / (ms / 1000);
        row[`${contender.name} MB/s`] = rate;
        if (contender !== contenders[0]) bestOther = Math.max(bestOther, rate);
      }
      row['loom / best other'] = Number(row['@loom/tokenizer MB/s']) / bestOther;
      rows.push(row);
    }
    if (notes.length === 1) notes.push('all three produce identical ids on both texts');
    return { title: 'tokenizer: GPT-2 (r50k_base) encode throughput, median of 7 runs', rows, notes };
  },
};
