import { readFileSync } from 'node:fs';
import { SamplerConfigError } from '@loom/sampler';
import { tokenizerFromTiktoken } from '@loom/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextGenerator } from '../src/index';
import { backendNamed, dataDir, stories } from './fixtures';

const cpu = await backendNamed('cpu');

describe('bad input', () => {
  let generator: TextGenerator;
  beforeAll(() => {
    if (!cpu) throw new Error('the CPU backend is always there');
    generator = stories(cpu);
  });
  afterAll(() => generator.model.dispose());

  it('refuses a tokenizer whose vocabulary is not the model’s', () => {
    const gpt2 = tokenizerFromTiktoken(readFileSync(`${dataDir}gpt2/r50k_base.tiktoken`, 'utf8'));
    expect(() => new TextGenerator(generator.model, gpt2)).toThrow(
      /the tokenizer has 5025[67] tokens but the model's vocabulary has 512 \(vocabSize\); use the tokenizer the model was trained with/,
    );
  });

  it('refuses a prompt longer than the context before doing any work', () => {
    const before = generator.model.backend.liveCount();
    const prompt = 'Once upon a time there was a cat. '.repeat(60);
    expect(() => generator.generate(prompt)).toThrow(
      /the prompt has \d+ tokens but the context holds 512 positions \(the model's maxSeqLen is 512\); shorten the prompt/,
    );
    expect(() => generator.generate([])).toThrow(/the prompt is empty/);
    expect(generator.model.backend.liveCount()).toBe(before);
  });

  it('refuses bad settings at once, naming the field', () => {
    expect(() => generator.generate('Hi', { sampling: { topP: 1.5 } })).toThrow(SamplerConfigError);
    expect(() => generator.generate('Hi', { stop: { maxNewTokens: 0 } })).toThrow(/maxNewTokens/);
  });

  it('refuses token ids outside the vocabulary and leaves the session as it was', () => {
    const session = generator.session();
    session.feed([1, 403]).dispose();
    expect(() => session.feed([7, 512])).toThrow(/token 1 is 512; ids must be integers in \[0, 512\)/);
    expect(session.tokens).toEqual([1, 403]);
    expect(() => generator.session({ capacity: 513 })).toThrow(/capacity must be an integer in \[1, 512\]/);
    session.dispose();
  });
});
