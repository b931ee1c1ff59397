import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { attentionMap } from '@loom/nn';
import { TextGenerator } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { loadTokenizer } from '@loom/tokenizer';
import { afterAll, describe, expect, it } from 'vitest';
import type { AttentionMap } from '../src/protocol';
import { describeAttention, tokenLabel } from '../src/ui/attention-text';
import { cellAt, cellColour, heatmapLayout } from '../src/ui/heatmap';
import { ATTENTION_TOKENS, attentionOf } from '../src/worker/attention';

setBackend(new CpuBackend());
const data = join(import.meta.dirname, '../../../../shared/data');
const generator = new TextGenerator(
  transformerFromTensors(loadModelFile(join(data, 'models/stories260K.bin'))),
  loadTokenizer(readFileSync(join(data, 'models/tok512.bin'))),
);

describe('attentionOf (the worker side of the attention view)', () => {
  afterAll(() => generator.model.dispose());

  it("gives the chosen head's map over the conversation, tokens as text (BOS by its entry)", async () => {
    const tokens = generator.encode('Once upon a time, there was a little girl');
    const map = await attentionOf(generator, tokens, 3, 2);
    expect(map).toMatchObject({ layer: 3, head: 2, layers: 5, heads: 8, total: tokens.length });
    expect(map.tokens[0]).toBe(generator.tokenizer.idToToken(tokens[0]));
    expect(map.tokens.slice(1).join('')).toBe(generator.tokenizer.decode(tokens.slice(1)));
    expect(Array.from(map.probs)).toEqual(
      Array.from(await attentionMap(generator.model, tokens, { layer: 3, head: 2 })),
    );
  });

  it(`keeps the last ${ATTENTION_TOKENS} tokens of a longer conversation, and is empty before a reply`, async () => {
    const tokens = Array.from({ length: 300 }, (_, i) => 2 + (i % 500));
    const map = await attentionOf(generator, tokens, 0, 0);
    expect(map.total).toBe(300);
    expect(map.tokens.length).toBe(ATTENTION_TOKENS);
    expect(map.tokens[0]).toBe(generator.tokenizer.decode([tokens[300 - ATTENTION_TOKENS]]));
    expect(map.probs.length).toBe(ATTENTION_TOKENS ** 2);
    const empty = await attentionOf(generator, [], 0, 0);
    expect(empty).toMatchObject({ total: 0, tokens: [], layers: 5, heads: 8 });
    expect(empty.probs.length).toBe(0);
  });

  it("names a layer the model does not have (the library's error)", async () => {
    await expect(attentionOf(generator, [1, 2, 3], 5, 0)).rejects.toThrow(
      'layer is 5; expected an integer in [0, 5)',
    );
  });
});

describe('the heatmap', () => {
  it('puts n cells a side after the label margin, and finds the cell under a point', () => {
    const layout = heatmapLayout(100, 40);
    expect(layout).toMatchObject({ n: 100, cell: 5, left: 46, top: 6, width: 552, height: 552 });
    expect(cellAt(layout, 46, 6)).toEqual({ row: 0, column: 0 });
    expect(cellAt(layout, 46 + 5 * 7 + 4, 6 + 5 * 3)).toEqual({ row: 3, column: 7 });
    expect(cellAt(layout, 45, 10)).toBeUndefined();
    expect(cellAt(layout, 100, 6 + 500)).toBeUndefined();
    expect(heatmapLayout(1000, 0).cell).toBe(2);
    expect(heatmapLayout(3, 0).cell).toBe(24);
  });

  it('colours weights on a log scale, from the background (0.001 or less) to the accent (1)', () => {
    const background = [255, 255, 255] as const;
    const accent = [47, 95, 208] as const;
    expect(cellColour(0, background, accent)).toEqual([255, 255, 255]);
    expect(cellColour(0.001, background, accent)).toEqual([255, 255, 255]);
    expect(cellColour(0.01, background, accent)).toEqual([186, 202, 239]);
    expect(cellColour(1, background, accent)).toEqual([47, 95, 208]);
  });

  it('labels tokens with their spaces and newlines visible, cut when long', () => {
    expect(tokenLabel(' a\nb\t')).toBe('·a↵b⇥');
    expect(tokenLabel('extraordinarily')).toBe('extraordina…');
  });

  it('describes the map in words', () => {
    // Token 0 attends to itself, 1 and 2 wholly to the token before them.
    const map: AttentionMap = {
      layer: 1,
      head: 0,
      layers: 2,
      heads: 2,
      tokens: ['a', 'b', 'c'],
      total: 3,
      probs: Float32Array.from([1, 0, 0, 1, 0, 0, 0, 1, 0]),
    };
    expect(describeAttention(map)).toBe(
      'Attention heatmap of layer 1, head 0, over 3 tokens: row i shows how much token i attends to each token up ' +
        'to it (columns); above the diagonal it is empty, as attention is causal. On average a token gives 67% of ' +
        'its attention to the first token, 33% to itself and 100% to the token before it.',
    );
  });
});
