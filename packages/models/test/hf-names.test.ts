import { describe, expect, it } from 'vitest';
import {
  fromHfTensors,
  hfToLoomRotary,
  type ModelConfig,
  type NamedTensor,
  type StoredTensor,
  toHfTensors,
} from '../src/index';
import { errorOf, randomArray, randomModel, seededRandom, tensorMap, tinyGpt2, tinyLlama } from './helpers';

function transposed(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

/** The names a Hugging Face Llama checkpoint of this config holds. */
function llamaHfNames(config: ModelConfig): string[] {
  const names = ['model.embed_tokens.weight', 'model.norm.weight'];
  if (!config.tiedEmbeddings) names.push('lm_head.weight');
  for (let i = 0; i < config.numLayers; i++) {
    for (const suffix of [
      'input_layernorm',
      'post_attention_layernorm',
      'self_attn.q_proj',
      'self_attn.k_proj',
      'self_attn.v_proj',
      'self_attn.o_proj',
      'mlp.gate_proj',
      'mlp.up_proj',
      'mlp.down_proj',
    ]) {
      names.push(`model.layers.${i}.${suffix}.weight`);
    }
  }
  return names.sort();
}

describe('Hugging Face Llama names', () => {
  const config = { ...tinyLlama, tiedEmbeddings: false };
  const loom = randomModel(config, 5);
  const hf = toHfTensors(config, loom);
  const hfByName = tensorMap(hf);

  it('exports every tensor under its HF name, q/k rows permuted for rotate-half', () => {
    expect(hf.map((t) => t.name).sort()).toEqual(llamaHfNames(config));
    const loomByName = tensorMap(loom);
    expect(hfByName.get('model.layers.1.mlp.gate_proj.weight')!.data).toBe(
      loomByName.get('layers.1.feed_forward.w1.weight')!.data,
    );
    expect(hfByName.get('model.layers.1.mlp.up_proj.weight')!.data).toBe(
      loomByName.get('layers.1.feed_forward.w3.weight')!.data,
    );
    expect(hfByName.get('lm_head.weight')!.data).toBe(loomByName.get('output.weight')!.data);
    const headDim = config.dim / config.numHeads;
    const qHf = hfByName.get('model.layers.0.self_attn.q_proj.weight')!;
    expect(qHf.data).not.toEqual(loomByName.get('layers.0.attention.wq.weight')!.data);
    expect(hfToLoomRotary(qHf.data, config.numHeads, headDim)).toEqual(
      loomByName.get('layers.0.attention.wq.weight')!.data,
    );
    // HF row headDim/2 of head 0 is Loom row 1 (the second element of the first pair).
    const kHf = hfByName.get('model.layers.0.self_attn.k_proj.weight')!.data;
    const kLoom = loomByName.get('layers.0.attention.wk.weight')!.data;
    expect(kHf.subarray((headDim / 2) * config.dim, (headDim / 2 + 1) * config.dim)).toEqual(
      kLoom.subarray(config.dim, 2 * config.dim),
    );
  });

  it('imports them back exactly, in canonical order', () => {
    expect(fromHfTensors(config, [...hf].reverse())).toEqual(loom);
  });

  it('drops rotary buffers and a tied lm_head equal to the embeddings', () => {
    const tied = { ...tinyLlama };
    const tiedHf = toHfTensors(tied, randomModel(tied, 2));
    const embeddings = tiedHf.find((t) => t.name === 'model.embed_tokens.weight')!;
    const extras: NamedTensor[] = [
      { name: 'model.layers.0.self_attn.rotary_emb.inv_freq', shape: [2], data: Float32Array.of(1, 0.1) },
      { name: 'lm_head.weight', shape: embeddings.shape, data: embeddings.data.slice() },
    ];
    expect(fromHfTensors(tied, [...tiedHf, ...extras])).toEqual(fromHfTensors(tied, tiedHf));
    const different = { ...extras[1], data: embeddings.data.map((v) => v + 1) };
    expect(errorOf(() => fromHfTensors(tied, [...tiedHf, different], 'm.safetensors'))).toMatch(
      /^m\.safetensors: the config ties the embeddings .* lm_head\.weight differs/,
    );
  });

  it('lists missing, unexpected and misshapen tensors by name in one error', () => {
    const broken: StoredTensor[] = hf.filter((t) => t.name !== 'model.layers.1.self_attn.v_proj.weight');
    broken.push({ name: 'model.layers.0.mlp.extra.weight', shape: [2], data: new Float32Array(2) });
    const index = broken.findIndex((t) => t.name === 'model.norm.weight');
    broken[index] = { name: 'model.norm.weight', shape: [7], data: new Float32Array(7) };
    expect(errorOf(() => fromHfTensors(config, broken, 'tiny.safetensors'))).toBe(
      'tiny.safetensors: the tensors do not match the model of its config (llama dim=8 hidden=12 layers=2 heads=2 kvHeads=1 vocab=11 seqLen=6 untied) — missing (1): layers.1.attention.wv.weight [4, 8]; unexpected (1): model.layers.0.mlp.extra.weight [2]; wrong shape (1): norm.weight expected [8], found [7]. Check that the weights and the config belong together.',
    );
  });
});

/** A GPT-2 checkpoint in HF layout built by hand: Conv1D weights [in, out], fused c_attn. */
function gpt2Checkpoint(config: ModelConfig, prefix: string): NamedTensor[] {
  const random = seededRandom(9);
  const { dim, hiddenDim, vocabSize, maxSeqLen } = config;
  const t = (name: string, shape: number[]): NamedTensor => ({
    name: `${prefix}${name}`,
    shape,
    data: randomArray(
      shape.reduce((a, b) => a * b, 1),
      random,
    ),
  });
  const tensors = [t('wte.weight', [vocabSize, dim]), t('wpe.weight', [maxSeqLen, dim])];
  for (let i = 0; i < config.numLayers; i++) {
    tensors.push(
      t(`h.${i}.ln_1.weight`, [dim]),
      t(`h.${i}.ln_1.bias`, [dim]),
      t(`h.${i}.attn.c_attn.weight`, [dim, 3 * dim]),
      t(`h.${i}.attn.c_attn.bias`, [3 * dim]),
      t(`h.${i}.attn.c_proj.weight`, [dim, dim]),
      t(`h.${i}.attn.c_proj.bias`, [dim]),
      t(`h.${i}.ln_2.weight`, [dim]),
      t(`h.${i}.ln_2.bias`, [dim]),
      t(`h.${i}.mlp.c_fc.weight`, [dim, hiddenDim]),
      t(`h.${i}.mlp.c_fc.bias`, [hiddenDim]),
      t(`h.${i}.mlp.c_proj.weight`, [hiddenDim, dim]),
      t(`h.${i}.mlp.c_proj.bias`, [dim]),
      t(`h.${i}.attn.bias`, [1, 1, maxSeqLen, maxSeqLen]),
      t(`h.${i}.attn.masked_bias`, []),
    );
  }
  tensors.push(t('ln_f.weight', [dim]), t('ln_f.bias', [dim]));
  return tensors;
}

describe('Hugging Face GPT-2 names', () => {
  const config = tinyGpt2;
  const { dim, hiddenDim } = config;
  const hf = gpt2Checkpoint(config, 'transformer.');
  const hfByName = new Map(hf.map((t) => [t.name.slice('transformer.'.length), t.data]));
  const loom = tensorMap(fromHfTensors(config, hf));

  it('splits c_attn into wq, wk, wv and transposes Conv1D weights to [out, in]', () => {
    const cAttn = hfByName.get('h.1.attn.c_attn.weight')!; // [dim, 3·dim]
    const fused = transposed(cAttn, dim, 3 * dim); // [3·dim, dim]: rows q, then k, then v
    expect(loom.get('layers.1.attention.wq.weight')!.data).toEqual(fused.subarray(0, dim * dim));
    expect(loom.get('layers.1.attention.wk.weight')!.data).toEqual(fused.subarray(dim * dim, 2 * dim * dim));
    expect(loom.get('layers.1.attention.wv.weight')!.data).toEqual(fused.subarray(2 * dim * dim));
    expect(loom.get('layers.1.attention.wv.bias')!.data).toEqual(
      hfByName.get('h.1.attn.c_attn.bias')!.subarray(2 * dim),
    );
    expect(loom.get('layers.0.attention.wo.weight')!.data).toEqual(
      transposed(hfByName.get('h.0.attn.c_proj.weight')!, dim, dim),
    );
    expect(loom.get('layers.0.feed_forward.w1.weight')!.shape).toEqual([hiddenDim, dim]);
    expect(loom.get('layers.0.feed_forward.w1.weight')!.data).toEqual(
      transposed(hfByName.get('h.0.mlp.c_fc.weight')!, dim, hiddenDim),
    );
    expect(loom.get('layers.0.feed_forward.w2.weight')!.data).toEqual(
      transposed(hfByName.get('h.0.mlp.c_proj.weight')!, hiddenDim, dim),
    );
    expect(loom.get('layers.0.ffn_norm.bias')!.data).toBe(hfByName.get('h.0.ln_2.bias'));
    expect(loom.get('pos_embeddings.weight')!.data).toBe(hfByName.get('wpe.weight'));
    expect(loom.get('norm.weight')!.data).toBe(hfByName.get('ln_f.weight'));
  });

  it('reads names with or without the transformer. prefix the same', () => {
    expect(fromHfTensors(config, gpt2Checkpoint(config, ''))).toEqual(fromHfTensors(config, hf));
  });

  it('exports back to the original checkpoint (without the mask buffers)', () => {
    const exported = toHfTensors(config, [...loom.values()]);
    const original = gpt2Checkpoint(config, '').filter((t) => !/^h\.\d+\.attn\.(masked_)?bias$/.test(t.name));
    expect(tensorMap(exported)).toEqual(tensorMap(original));
  });

  it('reports a misshapen fused projection by its HF name', () => {
    const broken = hf.map((t) =>
      t.name === 'transformer.h.0.attn.c_attn.weight' ? { ...t, shape: [3 * dim, dim] } : t,
    );
    const message = errorOf(() => fromHfTensors(config, broken, 'gpt2.safetensors'));
    expect(message).toMatch(/^gpt2\.safetensors: the tensors do not match/);
    expect(message).toMatch(
      /missing \(3\): layers\.0\.attention\.wq\.weight \[8, 8\], layers\.0\.attention\.wk\.weight \[8, 8\], layers\.0\.attention\.wv\.weight \[8, 8\]; unexpected \(1\): transformer\.h\.0\.attn\.c_attn\.weight \[24, 8\]/,
    );
  });
});
