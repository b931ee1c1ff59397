// Shared by the consumer test's ES module, CommonJS and browser runs: a tiny byte-level BPE trained
// on a fixed text and a tiny llama with its seeded initial weights on the CPU backend, generating
// greedily. The packages come in as arguments, so each run loads them its own way.

export const CORPUS = 'the quick brown fox jumps over the lazy dog; naïve café, déjà vu ✓\n';

/**
 * @param {{ tensor: typeof import('@loom/tensor'), cpu: typeof import('@loom/backend-cpu'),
 *   nn: typeof import('@loom/nn'), runtime: typeof import('@loom/runtime'),
 *   tokenizer: typeof import('@loom/tokenizer') }} loom
 * @returns {Promise<{ tokens: number[], text: string, stopReason: string }>}
 */
export async function greedyStory({ tensor, cpu, nn, runtime, tokenizer }) {
  tensor.setBackend(new cpu.CpuBackend());
  const bpe = tokenizer.trainBpe(CORPUS.repeat(8), { vocabSize: 300 });
  if (bpe.decode(bpe.encode(CORPUS)) !== CORPUS)
    throw new Error('the trained BPE does not round-trip its corpus');
  const config = nn.makeConfig('llama', {
    vocabSize: bpe.vocabSize,
    dim: 32,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    maxSeqLen: 64,
  });
  const generator = new runtime.TextGenerator(new nn.TransformerLM(config).eval(), bpe);
  const events = generator.generate('the quick', {
    sampling: { temperature: 0 },
    stop: { maxNewTokens: 12 },
  });
  for await (const event of events) {
    if (event.type === 'done') {
      const { tokens, text, stopReason } = event.stats;
      return { tokens: [...tokens], text, stopReason };
    }
  }
  throw new Error('the generation ended without a done event');
}
