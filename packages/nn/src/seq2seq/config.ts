import { type ConfigInput, configProblems, makeConfig, type Preset, type TransformerConfig } from '../config';

/**
 * The shape of an encoder–decoder: a TransformerConfig whose `numLayers` is the decoder's depth, plus the
 * encoder's depth. Source and target share the vocabulary (one embedding table, as in T5) and `maxSeqLen`
 * bounds both the source and the target.
 */
export interface Seq2SeqConfig extends TransformerConfig {
  readonly encoderLayers: number;
}

/** Why a config does not describe an encoder–decoder Loom can build (empty when it does). */
export function seq2seqConfigProblems(config: Seq2SeqConfig): string[] {
  const problems = configProblems(config);
  const { encoderLayers } = config;
  if (!Number.isInteger(encoderLayers) || encoderLayers < 1 || encoderLayers > 2 ** 12) {
    problems.push(`encoderLayers must be an integer in [1, ${2 ** 12}], got ${encoderLayers}`);
  }
  return problems;
}

/** Throws, listing every problem, unless the config describes an encoder–decoder Loom can build. */
export function validateSeq2SeqConfig(config: Seq2SeqConfig, source = 'seq2seq config'): void {
  const problems = seq2seqConfigProblems(config);
  if (problems.length > 0)
    throw new Error(`${source}: invalid encoder–decoder config: ${problems.join('; ')}`);
}

/** Fills an encoder–decoder config from a preset as `makeConfig` does; `numLayers` is the decoder's depth. */
export function makeSeq2SeqConfig(
  preset: Preset,
  input: ConfigInput & { readonly encoderLayers: number },
): Seq2SeqConfig {
  const config: Seq2SeqConfig = { ...makeConfig(preset, input), encoderLayers: input.encoderLayers };
  validateSeq2SeqConfig(config);
  return config;
}
