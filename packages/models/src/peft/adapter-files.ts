import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { applyLora, headDim, type Lora, type LoraSite, loraSites, type TransformerLM } from '@loom/nn';
import { assign, showShape, tensor } from '@loom/tensor';
import { writeFileAtomic } from '../atomic-write';
import { readRegularFile } from '../file-source';
import { hfToLoomRotary, loomToHfRotary } from '../hf/rotary';
import { readJsonFile } from '../json-file';
import { parseSafetensors } from '../safetensors/read';
import { serializeSafetensors } from '../safetensors/write';
import type { NamedTensor } from '../tensor';
import { peftConfigOf, settingsFromPeftConfig } from './adapter-config';

/** The two files of a PEFT adapter directory. */
export const PEFT_FILES = { config: 'adapter_config.json', weights: 'adapter_model.safetensors' } as const;

const PREFIX = 'base_model.model.';

/** PEFT's names of a site's A and B. */
function peftNames(site: LoraSite): { a: string; b: string } {
  return { a: `${PREFIX}${site.path}.lora_A.weight`, b: `${PREFIX}${site.path}.lora_B.weight` };
}

/**
 * How a block of lora_B rows is permuted between Loom and Hugging Face: Loom keeps q/k rows in interleaved RoPE
 * order, HF checkpoints (and so PEFT adapters of them) in rotate-half order — the same permutation as q_proj and
 * k_proj weights (see hf/rotary.ts).
 */
function rotaryHeads(model: TransformerLM, site: LoraSite): number | undefined {
  if (model.config.preset !== 'llama') return undefined;
  if (site.target === 'q_proj') return model.config.numHeads;
  if (site.target === 'k_proj') return model.config.numKvHeads;
  return undefined;
}

/** The adapters as PEFT's tensors (lora_A [r, in], lora_B [out, r]), q/k rows in HF order, c_attn's B stacked. */
export async function peftTensorsOf(lora: Lora): Promise<NamedTensor[]> {
  const out: NamedTensor[] = [];
  const hd = headDim(lora.model.config);
  for (const adapter of lora.adapters) {
    const names = peftNames(adapter.site);
    out.push({ name: names.a, shape: [...adapter.a.shape], data: await adapter.a.float32Data() });
    const blocks = await Promise.all(adapter.b.map((b) => b.float32Data()));
    const rows = adapter.b.reduce((n, b) => n + b.shape[0], 0);
    const stacked = new Float32Array(rows * adapter.options.rank); // [out, r]
    let at = 0;
    for (const block of blocks) {
      stacked.set(block, at);
      at += block.length;
    }
    const heads = rotaryHeads(lora.model, adapter.site);
    const data = heads === undefined ? stacked : loomToHfRotary(stacked, heads, hd);
    out.push({ name: names.b, shape: [rows, adapter.options.rank], data });
  }
  return out;
}

/**
 * Writes a LoRA as PEFT does: `adapter_config.json` and `adapter_model.safetensors` (float32) in `dir`, each
 * atomically; `baseModel` is recorded as base_model_name_or_path.
 */
export async function saveLoraAdapter(
  dir: string,
  lora: Lora,
  baseModel: string | null = null,
): Promise<void> {
  if (lora.merged)
    throw new Error('saveLoraAdapter: the adapters are merged into the weights; unmerge them first');
  const tensors = await peftTensorsOf(lora);
  const config = peftConfigOf(lora.settings, lora.model.config.preset, baseModel);
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(
    join(dir, PEFT_FILES.weights),
    serializeSafetensors(tensors, { metadata: { format: 'pt' } }),
  );
  writeFileAtomic(
    join(dir, PEFT_FILES.config),
    new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`),
  );
}

/**
 * Reads a PEFT LoRA adapter directory and applies it to `model` (on its backend). The config is checked first,
 * then every tensor name and shape against the model's modules (missing, unexpected and misshapen ones are all
 * listed) before any adapter is allocated.
 */
export function loadLoraAdapter(dir: string, model: TransformerLM): Lora {
  const configPath = join(dir, PEFT_FILES.config);
  const weightsPath = join(dir, PEFT_FILES.weights);
  const settings = settingsFromPeftConfig(
    readJsonFile(configPath, "a PEFT adapter's adapter_config.json"),
    model.config.preset,
    configPath,
  );
  const contents = parseSafetensors(readRegularFile(weightsPath, "a PEFT adapter's weights"), weightsPath);
  const byName = new Map(contents.tensors.map((t) => [t.name, t]));
  const sites = loraSites(model, settings.targets);
  const expected = sites.flatMap((site) => {
    const names = peftNames(site);
    const inFeatures = site.linears[0].inFeatures;
    const outFeatures = site.linears.reduce((n, l) => n + l.outFeatures, 0);
    return [
      { name: names.a, shape: [settings.rank, inFeatures] },
      { name: names.b, shape: [outFeatures, settings.rank] },
    ];
  });
  const missing = expected.filter((e) => !byName.has(e.name)).map((e) => e.name);
  const known = new Set(expected.map((e) => e.name));
  const unexpected = [...byName.keys()].filter((n) => !known.has(n));
  const misshapen = expected.flatMap((e) => {
    const t = byName.get(e.name);
    const same = t && t.shape.length === e.shape.length && t.shape.every((d, i) => d === e.shape[i]);
    return t && !same ? [`${e.name}: expected ${showShape(e.shape)}, got ${showShape(t.shape)}`] : [];
  });
  const notFloat = [...byName.values()].filter((t) => !(t.data instanceof Float32Array)).map((t) => t.name);
  if (missing.length + unexpected.length + misshapen.length + notFloat.length > 0) {
    const parts = [
      missing.length ? `missing: ${missing.join(', ')}` : '',
      unexpected.length ? `unexpected: ${unexpected.join(', ')}` : '',
      misshapen.length ? `wrong shape (r = ${settings.rank}): ${misshapen.join('; ')}` : '',
      notFloat.length ? `not float: ${notFloat.join(', ')}` : '',
    ].filter(Boolean);
    throw new Error(`${weightsPath}: the adapter does not fit this model (${parts.join(' | ')})`);
  }
  const lora = applyLora(model, settings);
  const hd = headDim(model.config);
  for (const adapter of lora.adapters) {
    const names = peftNames(adapter.site);
    const a = byName.get(names.a)!;
    const b = byName.get(names.b)!;
    const heads = rotaryHeads(model, adapter.site);
    const bData =
      heads === undefined ? (b.data as Float32Array) : hfToLoomRotary(b.data as Float32Array, heads, hd);
    const put = (target: (typeof adapter.b)[number], data: Float32Array) => {
      const t = tensor(data, target.shape, { backend: target.backend });
      assign(target, t);
      t.dispose();
    };
    put(adapter.a, a.data as Float32Array);
    let row = 0;
    for (const block of adapter.b) {
      const rows = block.shape[0];
      put(block, bData.subarray(row * settings.rank, (row + rows) * settings.rank));
      row += rows;
    }
  }
  return lora;
}
