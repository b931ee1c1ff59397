import { CpuBackend } from '@loom/backend-cpu';
import { kvCacheBytes } from '@loom/kvcache';
import { makeConfig, TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { encodeChat } from '@loom/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextGenerator } from '../src/index';
import { collect, maxDiff, recomputed, tok512 } from './fixtures';

const backend = new CpuBackend();
const context = 16;
const greedy = { sampling: { temperature: 0 }, stop: { maxNewTokens: 3 * context, eosTokenIds: [] } };

describe('a generation longer than its context', () => {
  let generator: TextGenerator;
  beforeAll(() => {
    setBackend(backend);
    const config = makeConfig('llama', { vocabSize: 512, dim: 32, numLayers: 2, numHeads: 4, maxSeqLen: 64 });
    generator = new TextGenerator(new TransformerLM(config).eval(), tok512());
  });
  afterAll(() => generator.model.dispose());

  it('stops with context-full without contextShift', async () => {
    const { stats } = await collect(generator.generate('Once upon a time', { ...greedy, context }));
    expect(stats.stopReason).toBe('context-full');
    expect(stats.tokens.length).toBe(context - 5 + 1); // 5 prompt tokens; the last token's output is one more
  });

  it('slides the window: 3× the context in tokens, the cache never larger, logits as a fresh prefill', async () => {
    const before = backend.liveBytes();
    const prompt = generator.encode('Once upon a time');
    expect(prompt[0]).toBe(generator.tokenizer.bos);
    const events = generator.generate(prompt, { ...greedy, context, contextShift: true, withLogits: true });
    const held = new Set<number>();
    // The tokens each step's logits follow: the prompt, growing by a token a step; when 17 do not fit in 16
    // positions, BOS stays, the oldest 8 of the other 16 go, and 9 are prefilled again.
    let window = [...prompt];
    let shifts = 0;
    const worst: number[] = [];
    for await (const event of events) {
      held.add(backend.liveBytes() - before);
      if (event.type !== 'token') continue;
      if (window.length > context) {
        window = [window[0], ...window.slice(9)];
        expect(window).toHaveLength(9);
        shifts++;
        worst.push(maxDiff(event.logits ?? [], await recomputed(generator.model, window)));
      }
      window.push(event.token);
    }
    const last = await collect(generator.generate(prompt, { ...greedy, context, contextShift: true }));
    expect(last.stats).toMatchObject({ stopReason: 'max-tokens', contextShifts: 5 });
    expect(last.stats.tokens).toHaveLength(3 * context);
    expect(shifts).toBe(5);
    expect(Math.max(...worst)).toBeLessThan(1e-4);
    expect(held).toEqual(
      new Set([
        kvCacheBytes({ batch: 1, seqLen: context, layers: 2, kvHeads: 4, headDim: 8, bytesPerElement: 4 }),
      ]),
    );
    expect(backend.liveBytes()).toBe(before);
  });

  it('keeps a chat’s system message when its answer fills the context', async () => {
    const chat = generator.chat({ system: 'Tell a story.', capacity: 48 });
    const system = [{ role: 'system', content: 'Tell a story.' }] as const;
    const lead = encodeChat(generator.tokenizer, 'plain', system, { addGenerationPrompt: false });
    const { stats } = await collect(
      chat.send('Go.', { ...greedy, stop: { maxNewTokens: 100, eosTokenIds: [] }, contextShift: true }),
    );
    expect(stats.stopReason).toBe('max-tokens');
    expect(stats.tokens).toHaveLength(100);
    expect(stats.contextShifts).toBeGreaterThan(1);
    expect(chat.cachedTokens.length).toBeLessThanOrEqual(48);
    expect(chat.cachedTokens.slice(0, lead.length)).toEqual(lead);
    chat.dispose();
  });
});
