import { KVCache } from '@loom/kvcache';
import { forwardBatch, type TransformerLM } from '@loom/nn';
import { Sampler } from '@loom/sampler';
import type { Tokenizer } from '@loom/tokenizer';

/** Sequences of calibration text, and tokens per sequence (fewer where the model's context is shorter). */
export const CALIBRATION_SEQUENCES = 8;
export const CALIBRATION_TOKENS = 256;
/** Calibration text is sampled with this seed, so a quantization can be repeated byte for byte. */
const CALIBRATION_SEED = 0;

/**
 * Text the model writes itself, for calibration when none is given: CALIBRATION_SEQUENCES sequences that start
 * at BOS, sampled at temperature 1 (no truncation, so they cover what the model puts weight on) in one batched
 * forward pass per step, each sequence with its own cache.
 */
export async function sampleCalibrationTokens(model: TransformerLM, bos: number): Promise<number[][]> {
  const length = Math.min(CALIBRATION_TOKENS, model.config.maxSeqLen);
  const { vocabSize } = model.config;
  const caches = Array.from({ length: CALIBRATION_SEQUENCES }, () =>
    KVCache.forModel(model.config, { capacity: length, backend: model.backend }),
  );
  const samplers = caches.map((_, s) => new Sampler({ temperature: 1, topP: 1, seed: CALIBRATION_SEED + s }));
  const sequences = caches.map(() => [bos]);
  try {
    for (let position = 0; position < length - 1; position++) {
      const logits = forwardBatch(
        model,
        caches.map((cache, s) => ({ tokens: [sequences[s][position]], offset: position, cache })),
      ); // [S, vocab]
      const rows = await logits.float32Data();
      logits.dispose();
      samplers.forEach((sampler, s) => {
        sequences[s].push(sampler.sample(rows.subarray(s * vocabSize, (s + 1) * vocabSize)).token);
      });
    }
  } finally {
    for (const cache of caches) cache.dispose();
  }
  return sequences;
}

/**
 * A calibration text file as token sequences: its tokens (BOS first where the tokenizer has one) cut into
 * windows of the model's calibration length, at most CALIBRATION_SEQUENCES of them; a text shorter than one
 * window is one shorter sequence. Throws when it has fewer than 2 tokens.
 */
export function calibrationWindows(
  text: string,
  tokenizer: Tokenizer,
  model: TransformerLM,
  name: string,
): number[][] {
  const ids = tokenizer.encode(text, { bos: tokenizer.bos !== undefined });
  if (ids.length < 2) {
    throw new Error(`--calibration ${name}: the text is ${ids.length} token(s); give at least a sentence`);
  }
  const length = Math.min(CALIBRATION_TOKENS, model.config.maxSeqLen, ids.length);
  const count = Math.min(CALIBRATION_SEQUENCES, Math.floor(ids.length / length));
  return Array.from({ length: count }, (_, w) => ids.slice(w * length, (w + 1) * length));
}
