import type { Backend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TextGenerator } from '../src/index';
import { backendNamed, backendNames, collect, golden, maxDiff, stories } from './fixtures';

const backends = await Promise.all(
  backendNames.map(async (name) => [name, await backendNamed(name)] as const),
);

for (const [name, backend] of backends) {
  describe.skipIf(!backend)(`stories260K against the reference on ${name}`, () => {
    let generator: TextGenerator;
    beforeAll(() => {
      generator = stories(backend as Backend);
    });
    afterAll(() => generator.model.dispose());

    for (const reference of golden.greedy) {
      it(`generates the reference text and ids greedily from ${JSON.stringify(reference.prompt)}`, async () => {
        const prompt = generator.encode(reference.prompt);
        expect(prompt).toEqual(reference.prompt_tokens);
        // run.c runs `steps` positions: the prompt, then a new token from each position after it.
        const maxNewTokens = reference.steps - prompt.length + 1;
        const { stats } = await collect(
          generator.generate(reference.prompt, { sampling: { temperature: 0 }, stop: { maxNewTokens } }),
        );
        expect(stats.stopReason).toBe('max-tokens');
        expect([...prompt, ...stats.tokens]).toEqual(reference.sequence);
        expect(generator.tokenizer.decode(prompt) + stats.text).toBe(reference.text);
      });
    }

    it('gives the reference logits at every position, one token at a time and as one prefill', async () => {
      const [{ tokens, logits }] = golden.logits;
      const session = generator.session();
      for (let p = 0; p < tokens.length; p++) {
        const row = session.feed([tokens[p]]);
        expect(maxDiff(await row.data(), logits[p])).toBeLessThan(1e-4);
        row.dispose();
      }
      session.dispose();
      const prefill = generator.session();
      const last = prefill.feed(tokens);
      expect(maxDiff(await last.data(), logits[tokens.length - 1])).toBeLessThan(1e-4);
      last.dispose();
      prefill.dispose();
    });
  });
}
