import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cutBatch, drawBatch, trainBatches } from '../src/batches';
import { loadCorpus, splitCorpus } from '../src/corpus';
import { generateStories, STORIES_CHARS } from '../src/stories';

describe('generated stories', () => {
  it('are the same text every time: a few hundred KB of simple English', () => {
    const text = generateStories();
    expect(generateStories()).toBe(text);
    expect(text.length).toBeGreaterThanOrEqual(STORIES_CHARS);
    expect(text.length).toBeLessThan(STORIES_CHARS + 2000);
    expect(text.startsWith('Once upon a time')).toBe(true);
    expect(new Set(text).size).toBeLessThan(60);
    const stories = text.trim().split('\n\n');
    expect(stories.length).toBeGreaterThan(300);
    expect(new Set(stories).size).toBe(stories.length);
    expect(loadCorpus(undefined).sha256).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('depend on the seed', () => {
    expect(generateStories(1, 5000)).not.toBe(generateStories(2, 5000));
    expect(generateStories(1, 5000)).toBe(generateStories(1, 5000));
  });
});

describe('splitCorpus', () => {
  it('keeps the first 90% for training and never splits a surrogate pair', () => {
    expect(splitCorpus('abcdefghij')).toEqual({ train: 'abcdefghi', val: 'j' });
    const text = `${'a'.repeat(8)}😀b`; // the cut at 9 would fall inside the emoji
    const { train, val } = splitCorpus(text);
    expect(train + val).toBe(text);
    expect(val.startsWith('😀')).toBe(true);
  });
});

describe('batches', () => {
  const tokens = Int32Array.from({ length: 1000 }, (_, i) => i);

  it('pair each input with the next token as its target', () => {
    const b = cutBatch(tokens, [5, 990], 9);
    expect(Array.from(b.inputs)).toEqual([
      5, 6, 7, 8, 9, 10, 11, 12, 13, 990, 991, 992, 993, 994, 995, 996, 997, 998,
    ]);
    expect(Array.from(b.targets)).toEqual(Array.from(b.inputs, (t) => t + 1));
    expect(() => cutBatch(tokens, [991], 9)).toThrow(/leaves no room for 10 tokens/);
  });

  it('depend only on the seed and the step, so a resumed run draws the same data', () => {
    const a = trainBatches(tokens, 7, 42, 2, 4, 16);
    expect(trainBatches(tokens, 7, 42, 2, 4, 16)).toEqual(a);
    expect(trainBatches(tokens, 7, 43, 2, 4, 16)[0].inputs).not.toEqual(a[0].inputs);
    expect(trainBatches(tokens, 8, 42, 2, 4, 16)[0].inputs).not.toEqual(a[0].inputs);
    expect(a[1].inputs).not.toEqual(a[0].inputs);
    expect(a[1]).toEqual(drawBatch(tokens, 7, 'trainBatches', 42 * 2 + 1, 4, 16));
    expect(drawBatch(tokens, 7, 'evalVal', 0, 4, 16).inputs).not.toEqual(
      drawBatch(tokens, 7, 'evalTrain', 0, 4, 16).inputs,
    );
  });

  it('cover the whole range of starts', () => {
    const starts = new Set<number>();
    for (let step = 0; step < 200; step++)
      for (const t of drawBatch(tokens, 1, 'trainBatches', step, 8, 10).inputs.filter((_, i) => i % 10 === 0))
        starts.add(t);
    expect(Math.min(...starts)).toBeLessThan(10);
    expect(Math.max(...starts)).toBeGreaterThan(980);
    expect(Math.max(...starts)).toBeLessThanOrEqual(989);
  });
});
