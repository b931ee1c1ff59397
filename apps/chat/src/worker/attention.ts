import { attentionMap } from '@loom/nn';
import type { TextGenerator } from '@loom/runtime';
import type { Tokenizer } from '@loom/tokenizer';
import type { AttentionMap } from '../protocol';

/** The most tokens a map covers: a [256, 256] matrix is 256 KiB and a readable canvas. */
export const ATTENTION_TOKENS = 256;

/** A token as text; one that decodes to nothing alone (BOS, a special token) by its vocabulary entry. */
function tokenText(tokenizer: Tokenizer, id: number): string {
  return tokenizer.decode([id]) || tokenizer.idToToken(id);
}

/**
 * The attention of `head` of `layer` over the conversation's last tokens (`tokens`: prompt and reply). Over
 * ATTENTION_TOKENS (or the model's maxSeqLen) only the last are kept, and the map is of those alone, at positions
 * from 0. No tokens (no reply yet) give an empty map.
 */
export async function attentionOf(
  generator: TextGenerator,
  tokens: readonly number[],
  layer: number,
  head: number,
): Promise<AttentionMap> {
  const { model, tokenizer } = generator;
  const { numLayers, numHeads, maxSeqLen } = model.config;
  const shown = tokens.slice(-Math.min(ATTENTION_TOKENS, maxSeqLen));
  const probs = shown.length > 0 ? await attentionMap(model, shown, { layer, head }) : new Float32Array(0);
  return {
    layer,
    head,
    layers: numLayers,
    heads: numHeads,
    tokens: shown.map((id) => tokenText(tokenizer, id)),
    total: tokens.length,
    probs,
  };
}
