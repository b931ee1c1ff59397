import type { ModelConfig } from '../config';
import { sliceColumns, transpose } from '../matrix';
import type { NamedTensor, StoredTensor } from '../tensor';

const TOP_NAMES: readonly (readonly [hf: string, loom: string])[] = [
  ['wte.weight', 'tok_embeddings.weight'],
  ['wpe.weight', 'pos_embeddings.weight'],
  ['ln_f.weight', 'norm.weight'],
  ['ln_f.bias', 'norm.bias'],
  ['lm_head.weight', 'output.weight'],
];

/** GPT-2 per-layer modules (after `h.{i}.`) and their Loom names (after `layers.{i}.`); Conv1D ones are [in, out]. */
const LAYER_MODULES: readonly (readonly [hf: string, loom: string, conv1d: boolean])[] = [
  ['ln_1', 'attention_norm', false],
  ['attn.c_proj', 'attention.wo', true],
  ['ln_2', 'ffn_norm', false],
  ['mlp.c_fc', 'feed_forward.w1', true],
  ['mlp.c_proj', 'feed_forward.w2', true],
];

/** The fused query/key/value projection: Conv1D weight [dim, 3·dim] and bias [3·dim]. */
const FUSED_QKV = 'attn.c_attn';
const QKV: readonly string[] = ['attention.wq', 'attention.wk', 'attention.wv'];

/** The causal-mask buffers (`attn.bias`, `attn.masked_bias`) GPT-2 checkpoints carry; not parameters. */
const IGNORED_BUFFER = /^h\.\d+\.attn\.(bias|masked_bias)$/;

const HF_LAYER = /^h\.(\d+)\.(.+)\.(weight|bias)$/;
const PREFIX = 'transformer.';

function splitQkv(
  config: ModelConfig,
  tensor: StoredTensor,
  layer: string,
  kind: string,
): StoredTensor[] | undefined {
  const { dim } = config;
  const names = QKV.map((loom) => `layers.${layer}.${loom}.${kind}`);
  if (tensor.data instanceof Int32Array) return undefined;
  const { data } = tensor;
  if (kind === 'bias' && tensor.shape.length === 1 && tensor.shape[0] === 3 * dim) {
    return names.map((name, part) => ({
      name,
      shape: [dim],
      data: data.slice(part * dim, (part + 1) * dim),
    }));
  }
  if (
    kind === 'weight' &&
    tensor.shape.length === 2 &&
    tensor.shape[0] === dim &&
    tensor.shape[1] === 3 * dim
  ) {
    return names.map((name, part) => ({
      name,
      shape: [dim, dim],
      data: transpose(sliceColumns(data, dim, 3 * dim, part * dim, (part + 1) * dim), dim, dim),
    }));
  }
  return undefined;
}

/**
 * A GPT-2 tensor (with or without the `transformer.` prefix) under its Loom name(s): the fused c_attn is split
 * into wq/wk/wv and Conv1D weights are transposed to [out, in]. Returns [] for the attention-mask buffers and the
 * tensor unchanged when it does not fit (validation reports those).
 */
export function gpt2FromHf(config: ModelConfig, tensor: StoredTensor): StoredTensor[] {
  const bare = tensor.name.startsWith(PREFIX) ? tensor.name.slice(PREFIX.length) : tensor.name;
  const top = TOP_NAMES.find(([hf]) => hf === bare);
  if (top !== undefined) return [{ ...tensor, name: top[1] }];
  if (IGNORED_BUFFER.test(bare)) return [];
  const match = HF_LAYER.exec(bare);
  if (match === null) return [tensor];
  const [, layer, module, kind] = match;
  if (module === FUSED_QKV) return splitQkv(config, tensor, layer, kind) ?? [tensor];
  const entry = LAYER_MODULES.find(([hf]) => hf === module);
  if (entry === undefined) return [tensor];
  const [, loom, conv1d] = entry;
  const name = `layers.${layer}.${loom}.${kind}`;
  if (!conv1d || kind === 'bias' || tensor.data instanceof Int32Array || tensor.shape.length !== 2) {
    return [{ ...tensor, name }];
  }
  const [inputs, outputs] = tensor.shape;
  return [{ name, shape: [outputs, inputs], data: transpose(tensor.data, inputs, outputs) }];
}

/** Validated Loom gpt2 tensors (by name) as a GPT-2 checkpoint without prefix: fused c_attn, Conv1D [in, out]. */
export function gpt2ToHf(config: ModelConfig, byName: ReadonlyMap<string, NamedTensor>): NamedTensor[] {
  const get = (name: string) => byName.get(name)!;
  const out: NamedTensor[] = [];
  const copy = (hf: string, loom: string) => out.push({ ...get(loom), name: hf });
  copy('wte.weight', 'tok_embeddings.weight');
  copy('wpe.weight', 'pos_embeddings.weight');
  const { dim } = config;
  for (let layer = 0; layer < config.numLayers; layer++) {
    const loomName = (module: string, kind: string) => `layers.${layer}.${module}.${kind}`;
    const hfName = (module: string, kind: string) => `h.${layer}.${module}.${kind}`;
    const rows = new Float32Array(3 * dim * dim); // [3·dim, dim]: wq, wk, wv stacked
    const bias = new Float32Array(3 * dim);
    QKV.forEach((module, part) => {
      rows.set(get(loomName(module, 'weight')).data, part * dim * dim);
      bias.set(get(loomName(module, 'bias')).data, part * dim);
    });
    out.push({
      name: hfName(FUSED_QKV, 'weight'),
      shape: [dim, 3 * dim],
      data: transpose(rows, 3 * dim, dim),
    });
    out.push({ name: hfName(FUSED_QKV, 'bias'), shape: [3 * dim], data: bias });
    for (const [hf, loom, conv1d] of LAYER_MODULES) {
      const weight = get(loomName(loom, 'weight'));
      if (conv1d) {
        const [outputs, inputs] = weight.shape;
        out.push({
          name: hfName(hf, 'weight'),
          shape: [inputs, outputs],
          data: transpose(weight.data, outputs, inputs),
        });
      } else {
        copy(hfName(hf, 'weight'), loomName(loom, 'weight'));
      }
      copy(hfName(hf, 'bias'), loomName(loom, 'bias'));
    }
  }
  copy('ln_f.weight', 'norm.weight');
  copy('ln_f.bias', 'norm.bias');
  if (!config.tiedEmbeddings) copy('lm_head.weight', 'output.weight');
  return out;
}
