import type { TransformerLM } from '@loom/nn';
import { StreamDecoder, type Tokenizer } from '@loom/tokenizer';
import type { TextSink } from './io';
import type { TrainOptions } from './options';
import { keyedSeed } from './random';
import { generate } from './sample';

/** The prompt of the stories demo. */
export const STORIES_PROMPT = 'Once upon a time';

/** --prompt, else the opening of every generated story, else a newline (a line start in most texts). */
function promptText(options: TrainOptions): string {
  return options.prompt ?? (options.data === undefined ? STORIES_PROMPT : '\n');
}

/**
 * Generates `options.sampleTokens` tokens after the prompt and streams the text to `out` as
 * it is produced (greedy at temperature 0, else seeded sampling). Returns the whole text.
 */
export async function writeSample(
  model: TransformerLM,
  tokenizer: Tokenizer,
  options: TrainOptions,
  out: TextSink,
): Promise<string> {
  const prompt = promptText(options);
  let ids: number[];
  try {
    ids = tokenizer.encode(prompt);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`--prompt ${JSON.stringify(prompt)}: cannot encode it with this tokenizer (${reason})`);
  }
  if (ids.length === 0) throw new Error(`--prompt ${JSON.stringify(prompt)}: encodes to no tokens`);
  const how = options.temperature === 0 ? 'greedy' : `temperature ${options.temperature}`;
  out.write(`--- sample (${options.sampleTokens} tokens, ${how}) ---\n${prompt}`);
  const decoder = new StreamDecoder(tokenizer);
  let text = prompt;
  await generate(model, ids, {
    maxTokens: options.sampleTokens,
    temperature: options.temperature,
    seed: keyedSeed(options.seed, 'sample', 0),
    onToken: (id) => {
      const piece = decoder.push(id);
      text += piece;
      out.write(piece);
    },
  });
  const rest = decoder.flush();
  text += rest;
  out.write(`${rest}\n---\n`);
  return text;
}
