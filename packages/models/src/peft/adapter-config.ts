import { checkLoraTargets, type LoraSettings, type Preset } from '@loom/nn';

/** The keys of PEFT's `adapter_config.json` that describe a LoRA; Loom writes these and reads them back. */
export interface PeftLoraConfig {
  readonly peft_type: 'LORA';
  readonly task_type: 'CAUSAL_LM';
  readonly base_model_name_or_path: string | null;
  readonly r: number;
  readonly lora_alpha: number;
  readonly lora_dropout: number;
  readonly target_modules: readonly string[];
  readonly bias: 'none';
  /** True for GPT-2, whose Conv1D weights are stored [in, out]. */
  readonly fan_in_fan_out: boolean;
  readonly inference_mode: boolean;
  readonly init_lora_weights: boolean;
  readonly modules_to_save: null;
  readonly use_rslora: boolean;
  readonly use_dora: boolean;
}

/** The adapter_config.json of a LoRA with these settings on a model of `preset`. */
export function peftConfigOf(
  settings: LoraSettings,
  preset: Preset,
  baseModel: string | null,
): PeftLoraConfig {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: settings.rank,
    lora_alpha: settings.alpha,
    lora_dropout: settings.dropout,
    target_modules: [...settings.targets],
    bias: 'none',
    fan_in_fan_out: preset === 'gpt2',
    inference_mode: true,
    init_lora_weights: true,
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The LoRA settings of a parsed adapter_config.json for a model of `preset`. Refuses, listing every problem, what
 * Loom cannot apply as written: another PEFT type, biases trained, rsLoRA/DoRA, per-module rank or alpha patterns,
 * layer subsets, modules to save, or targets the family does not have.
 */
export function settingsFromPeftConfig(json: unknown, preset: Preset, source: string): LoraSettings {
  if (!isRecord(json)) throw new Error(`${source}: expected a JSON object (PEFT's adapter_config.json)`);
  const problems: string[] = [];
  if (json.peft_type !== 'LORA')
    problems.push(`peft_type must be "LORA", got ${JSON.stringify(json.peft_type)}`);
  const r = json.r;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1)
    problems.push(`r must be a positive integer, got ${JSON.stringify(r)}`);
  const alpha = json.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !(alpha > 0))
    problems.push(`lora_alpha must be a positive number, got ${JSON.stringify(alpha)}`);
  const dropout = json.lora_dropout ?? 0;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    problems.push(`lora_dropout must be in [0, 1), got ${JSON.stringify(dropout)}`);
  }
  if ((json.bias ?? 'none') !== 'none')
    problems.push(`bias must be "none" (Loom trains no biases), got ${JSON.stringify(json.bias)}`);
  for (const key of ['use_rslora', 'use_dora'] as const) {
    if (json[key] === true) problems.push(`${key} is not supported`);
  }
  for (const key of ['rank_pattern', 'alpha_pattern'] as const) {
    const v = json[key];
    if (v !== undefined && v !== null && !(isRecord(v) && Object.keys(v).length === 0)) {
      problems.push(`${key} is not supported (every module must share r and lora_alpha)`);
    }
  }
  for (const key of ['layers_to_transform', 'modules_to_save'] as const) {
    if (json[key] !== undefined && json[key] !== null) problems.push(`${key} is not supported`);
  }
  const fanInFanOut = json.fan_in_fan_out ?? false;
  if (fanInFanOut !== (preset === 'gpt2')) {
    problems.push(
      `fan_in_fan_out must be ${preset === 'gpt2'} for a ${preset} model, got ${JSON.stringify(fanInFanOut)}`,
    );
  }
  const targets = json.target_modules;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) {
    problems.push(`target_modules must be a list of module names, got ${JSON.stringify(targets)}`);
  }
  if (problems.length > 0) throw new Error(`${source}: cannot apply this adapter: ${problems.join('; ')}`);
  let chosen: LoraSettings['targets'];
  try {
    chosen = checkLoraTargets(preset, targets as string[]);
  } catch (error) {
    throw new Error(`${source}: ${(error as Error).message}`);
  }
  return { rank: r as number, alpha: alpha as number, dropout: dropout as number, targets: chosen };
}
