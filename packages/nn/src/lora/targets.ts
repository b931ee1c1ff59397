import { headDim, type Preset, type TransformerConfig } from '../config';
import type { Linear } from '../layers/linear';
import type { TransformerLM } from '../transformer';

/** PEFT's module names of a Llama (Qwen) model's linear layers. */
export const LLAMA_LORA_TARGETS = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;

/** PEFT's module names of GPT-2's Conv1D layers: `c_proj` names both the attention and the MLP output. */
export const GPT2_LORA_TARGETS = ['c_attn', 'c_proj', 'c_fc'] as const;

export type LlamaLoraTarget = (typeof LLAMA_LORA_TARGETS)[number];
export type Gpt2LoraTarget = (typeof GPT2_LORA_TARGETS)[number];
export type LoraTarget = LlamaLoraTarget | Gpt2LoraTarget;

/** The targets PEFT picks for a family when none are given: q_proj, v_proj (Llama); c_attn (GPT-2). */
export function defaultLoraTargets(preset: Preset): readonly LoraTarget[] {
  return preset === 'llama' ? ['q_proj', 'v_proj'] : ['c_attn'];
}

/** The target names a family has. */
export function loraTargetsOf(preset: Preset): readonly LoraTarget[] {
  return preset === 'llama' ? LLAMA_LORA_TARGETS : GPT2_LORA_TARGETS;
}

/**
 * One adapted module in PEFT's terms. `path` is the module's name under `base_model.model.` in a Hugging Face
 * model (`model.layers.0.self_attn.q_proj`, `transformer.h.0.attn.c_attn`). `linears` are the Loom layers it
 * covers: one, or GPT-2's fused c_attn as Loom's separate query, key and value projections (rows in that order).
 */
export interface LoraSite {
  readonly path: string;
  readonly target: LoraTarget;
  readonly layer: number;
  readonly linears: readonly Linear[];
}

/** Throws naming the bad entries unless every target is one of the family's module names, given once. */
export function checkLoraTargets(preset: Preset, targets: readonly string[]): readonly LoraTarget[] {
  const known = loraTargetsOf(preset);
  const unknown = targets.filter((t) => !known.some((k) => k === t));
  if (unknown.length > 0) {
    throw new Error(
      `LoRA targets: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a ${preset} module name; expected some of ${known.join(', ')}`,
    );
  }
  const twice = targets.filter((t, i) => targets.indexOf(t) !== i);
  if (twice.length > 0)
    throw new Error(`LoRA targets: ${twice.join(', ')} given twice; name each module once`);
  if (targets.length === 0) throw new Error(`LoRA targets: none given; expected some of ${known.join(', ')}`);
  return known.filter((k) => targets.includes(k));
}

/** Every module of `model` that the targets name, layer by layer, in the family's target order. */
export function loraSites(model: TransformerLM, targets: readonly string[]): LoraSite[] {
  const preset = model.config.preset;
  const chosen = checkLoraTargets(preset, targets);
  return model.layers.flatMap((block, layer) => {
    const { attention: a, feedForward: f } = block;
    if (!('w1' in f))
      throw new Error('loraSites: LoRA on a mixture-of-experts model (config.moe) is not supported');
    const sites: LoraSite[] = [];
    const add = (path: string, target: LoraTarget, linears: readonly Linear[]) => {
      if (chosen.includes(target)) sites.push({ path, target, layer, linears });
    };
    if (preset === 'llama') {
      const base = `model.layers.${layer}`;
      add(`${base}.self_attn.q_proj`, 'q_proj', [a.wq]);
      add(`${base}.self_attn.k_proj`, 'k_proj', [a.wk]);
      add(`${base}.self_attn.v_proj`, 'v_proj', [a.wv]);
      add(`${base}.self_attn.o_proj`, 'o_proj', [a.wo]);
      if (!('w3' in f)) throw new Error('loraSites: a llama block must have a SwiGLU feed-forward');
      add(`${base}.mlp.gate_proj`, 'gate_proj', [f.w1]);
      add(`${base}.mlp.up_proj`, 'up_proj', [f.w3]);
      add(`${base}.mlp.down_proj`, 'down_proj', [f.w2]);
    } else {
      const base = `transformer.h.${layer}`;
      add(`${base}.attn.c_attn`, 'c_attn', [a.wq, a.wk, a.wv]);
      add(`${base}.attn.c_proj`, 'c_proj', [a.wo]);
      add(`${base}.mlp.c_fc`, 'c_fc', [f.w1]);
      add(`${base}.mlp.c_proj`, 'c_proj', [f.w2]);
    }
    return sites;
  });
}

/** Input and output widths of each module a target names, per layer (GPT-2's c_attn: out is q+k+v). */
export function loraTargetShapes(
  config: TransformerConfig,
  target: LoraTarget,
): readonly { readonly in: number; readonly out: number }[] {
  const hd = headDim(config);
  const q = config.numHeads * hd;
  const kv = config.numKvHeads * hd;
  const { dim, hiddenDim } = config;
  switch (target) {
    case 'q_proj':
      return [{ in: dim, out: q }];
    case 'k_proj':
    case 'v_proj':
      return [{ in: dim, out: kv }];
    case 'o_proj':
      return [{ in: q, out: dim }];
    case 'gate_proj':
    case 'up_proj':
    case 'c_fc':
      return [{ in: dim, out: hiddenDim }];
    case 'down_proj':
      return [{ in: hiddenDim, out: dim }];
    case 'c_attn':
      return [{ in: dim, out: q + 2 * kv }];
    case 'c_proj':
      return [
        { in: q, out: dim },
        { in: hiddenDim, out: dim },
      ];
  }
}
