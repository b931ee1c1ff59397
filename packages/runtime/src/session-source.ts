import type { Tokenizer } from '@loom/tokenizer';
import type { InferenceSession, InferenceSessionOptions } from './inference-session';

/**
 * What a conversation needs from its generator (a `TextGenerator` is one): the tokenizer, and a fresh inference
 * session over the model within the generator's limits.
 */
export interface SessionSource {
  readonly tokenizer: Tokenizer;
  session(options?: InferenceSessionOptions): InferenceSession;
}
