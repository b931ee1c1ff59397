import { expect, it } from 'vitest';
import { collect, describeEachBackend, golden, maxDiff } from './fixtures';

describeEachBackend(
  (name) => `stories260K against the reference on ${name}`,
  (suite) => {
    for (const reference of golden.greedy) {
      it(`generates the reference text and ids greedily from ${JSON.stringify(reference.prompt)}`, async () => {
        const prompt = suite.generator.encode(reference.prompt);
        expect(prompt).toEqual(reference.prompt_tokens);
        // run.c runs `steps` positions: the prompt, then a new token from each position after it.
        const maxNewTokens = reference.steps - prompt.length + 1;
        const { stats } = await collect(
          suite.generator.generate(reference.prompt, {
            sampling: { temperature: 0 },
            stop: { maxNewTokens },
          }),
        );
        expect(stats.stopReason).toBe('max-tokens');
        expect([...prompt, ...stats.tokens]).toEqual(reference.sequence);
        expect(suite.generator.tokenizer.decode(prompt) + stats.text).toBe(reference.text);
      });
    }

    it('gives the reference logits at every position, one token at a time and as one prefill', async () => {
      const [{ tokens, logits }] = golden.logits;
      const session = suite.generator.session();
      for (let p = 0; p < tokens.length; p++) {
        const row = session.feed([tokens[p]]);
        expect(maxDiff(await row.data(), logits[p])).toBeLessThan(1e-4);
        row.dispose();
      }
      session.dispose();
      const prefill = suite.generator.session();
      const last = prefill.feed(tokens);
      expect(maxDiff(await last.data(), logits[tokens.length - 1])).toBeLessThan(1e-4);
      last.dispose();
      prefill.dispose();
    });
  },
);
