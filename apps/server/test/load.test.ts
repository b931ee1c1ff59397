import { CharTokenizer } from '@loom/tokenizer';
import { describe, expect, it } from 'vitest';
import { chooseTemplate } from '../src/load';
import { loadStories } from './helpers';

describe('chat template', () => {
  it('is plain for a story model, chatml when the tokenizer has its tokens, and the one asked for otherwise', async () => {
    const stories = await loadStories();
    expect(stories.template).toBe('plain');
    stories.model.dispose();
    const chatml = CharTokenizer.fromCorpus('abc', { specialTokens: ['<|im_start|>', '<|im_end|>'] });
    expect(chooseTemplate(chatml, undefined)).toBe('chatml');
    expect(
      chooseTemplate(CharTokenizer.fromCorpus('abc', { specialTokens: ['<|im_start|>'] }), undefined),
    ).toBe('plain');
    expect(chooseTemplate(chatml, 'llama2')).toBe('llama2');
  });
});
