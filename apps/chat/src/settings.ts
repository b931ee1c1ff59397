import { resolveSamplerConfig, resolveStopConfig, type SamplerConfig } from '@loom/sampler';

/** The generation controls of the page, validated. */
export interface Settings {
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly minP: number;
  readonly repetitionPenalty: number;
  readonly frequencyPenalty: number;
  readonly presencePenalty: number;
  readonly maxNewTokens: number;
  readonly seed: number;
}

export type SettingName = keyof Settings;

export const DEFAULT_SETTINGS: Settings = {
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repetitionPenalty: 1.1,
  frequencyPenalty: 0,
  presencePenalty: 0,
  maxNewTokens: 256,
  seed: 0,
};

/**
 * Label and input step of each control, in the order the page shows them, and the OpenAI API parameter it is
 * sent as to a server (none for the sampler's own controls, which that API lacks).
 */
export const SETTING_FIELDS: readonly {
  readonly name: SettingName;
  readonly label: string;
  readonly step: string;
  readonly openai?: string;
}[] = [
  { name: 'temperature', label: 'Temperature', step: '0.05', openai: 'temperature' },
  { name: 'topK', label: 'Top-k', step: '1' },
  { name: 'topP', label: 'Top-p', step: '0.01', openai: 'top_p' },
  { name: 'minP', label: 'Min-p', step: '0.01' },
  { name: 'repetitionPenalty', label: 'Repetition penalty', step: '0.05' },
  { name: 'frequencyPenalty', label: 'Frequency penalty', step: '0.1', openai: 'frequency_penalty' },
  { name: 'presencePenalty', label: 'Presence penalty', step: '0.1', openai: 'presence_penalty' },
  { name: 'maxNewTokens', label: 'Max tokens', step: '1', openai: 'max_tokens' },
  { name: 'seed', label: 'Seed', step: '1', openai: 'seed' },
];

/** The controls the OpenAI API has, keyed by its parameter names (`top_p`, `max_tokens`, …). */
export function openaiParameters(settings: Settings): Record<string, number> {
  return Object.fromEntries(
    SETTING_FIELDS.flatMap(({ name, openai }) => (openai ? [[openai, settings[name]]] : [])),
  );
}

/** The number typed into a control, or the sampler's own message saying what it accepts. */
export function parseSetting(
  name: SettingName,
  raw: string,
): { readonly value: number } | { readonly error: string } {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  try {
    if (name === 'maxNewTokens') resolveStopConfig({ maxNewTokens: value });
    else resolveSamplerConfig({ [name]: value } satisfies SamplerConfig);
    return { value };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
