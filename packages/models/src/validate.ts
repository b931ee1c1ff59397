import {
  headDim,
  innerDim,
  kvDim,
  type MambaConfig,
  qDim,
  qkvHasBias,
  validateConfig,
  validateMambaConfig,
} from '@loom/nn';
import { showShape, sizeOf } from '@loom/tensor';
import { type CheckpointConfig, describeConfig, isMambaConfig, type ModelConfig } from './config';
import type { NamedTensor, StoredTensor } from './tensor';

/** The name and shape of one parameter a model of some config has. */
export interface TensorSpec {
  name: string;
  shape: number[];
}

/**
 * Every parameter of a model of this config, with its Loom name and shape, in Loom's canonical order (the order
 * Loom writes them). Weight matrices are [out, in]; q/k/v biases (Qwen2) and q/k norms (Qwen3) follow the config;
 * a Mamba config gives MambaLM's parameters (`expectedMambaTensors`).
 */
export function expectedTensors(config: CheckpointConfig): TensorSpec[] {
  return isMambaConfig(config) ? expectedMambaTensors(config) : expectedTransformerTensors(config);
}

/**
 * A MambaLM's parameters under its own names, in its order (`namedParameters`): `embedding.weight` [vocab, dim];
 * per layer the mixer's conv1d weight [E, W] and bias [E], A_log [E, N], D [E], in_proj [2E, dim],
 * x_proj [R + 2N, E], dt_proj weight [E, R] and bias [E], out_proj [dim, E], then the block's norm [dim];
 * `norm_f.weight`, and `lm_head.weight` [vocab, dim] when untied (E = expand · dim, N = stateSize,
 * W = convWidth, R = dtRank).
 */
function expectedMambaTensors(config: MambaConfig): TensorSpec[] {
  const { dim, vocabSize, stateSize: n, convWidth: w, dtRank: r } = config;
  const e = innerDim(config);
  const specs: TensorSpec[] = [{ name: 'embedding.weight', shape: [vocabSize, dim] }];
  for (let layer = 0; layer < config.numLayers; layer++) {
    const mixer = `layers.${layer}.mixer`;
    specs.push(
      { name: `${mixer}.conv1d.weight`, shape: [e, w] },
      { name: `${mixer}.conv1d.bias`, shape: [e] },
      { name: `${mixer}.A_log`, shape: [e, n] },
      { name: `${mixer}.D`, shape: [e] },
      { name: `${mixer}.in_proj.weight`, shape: [2 * e, dim] },
      { name: `${mixer}.x_proj.weight`, shape: [r + 2 * n, e] },
      { name: `${mixer}.dt_proj.weight`, shape: [e, r] },
      { name: `${mixer}.dt_proj.bias`, shape: [e] },
      { name: `${mixer}.out_proj.weight`, shape: [dim, e] },
      { name: `layers.${layer}.norm.weight`, shape: [dim] },
    );
  }
  specs.push({ name: 'norm_f.weight', shape: [dim] });
  if (!config.tiedEmbeddings) specs.push({ name: 'lm_head.weight', shape: [vocabSize, dim] });
  return specs;
}

function expectedTransformerTensors(config: ModelConfig): TensorSpec[] {
  const { dim, hiddenDim, vocabSize } = config;
  const specs: TensorSpec[] = [];
  const add = (name: string, shape: number[]) => specs.push({ name, shape });
  const norm = (prefix: string) => {
    add(`${prefix}.weight`, [dim]);
    if (config.bias) add(`${prefix}.bias`, [dim]);
  };
  const linear = (prefix: string, out: number, inputs: number, bias = config.bias) => {
    add(`${prefix}.weight`, [out, inputs]);
    if (bias) add(`${prefix}.bias`, [out]);
  };
  add('tok_embeddings.weight', [vocabSize, dim]);
  if (config.preset === 'gpt2') add('pos_embeddings.weight', [config.maxSeqLen, dim]);
  for (let layer = 0; layer < config.numLayers; layer++) {
    const prefix = `layers.${layer}`;
    norm(`${prefix}.attention_norm`);
    linear(`${prefix}.attention.wq`, qDim(config), dim, qkvHasBias(config));
    linear(`${prefix}.attention.wk`, kvDim(config), dim, qkvHasBias(config));
    linear(`${prefix}.attention.wv`, kvDim(config), dim, qkvHasBias(config));
    linear(`${prefix}.attention.wo`, dim, qDim(config));
    if (config.qkNorm) {
      add(`${prefix}.attention.q_norm.weight`, [headDim(config)]);
      add(`${prefix}.attention.k_norm.weight`, [headDim(config)]);
    }
    norm(`${prefix}.ffn_norm`);
    const experts = config.moe ? Array.from({ length: config.moe.experts }, (_, e) => `.experts.${e}`) : [''];
    if (config.moe) linear(`${prefix}.feed_forward.gate`, config.moe.experts, dim, false);
    for (const expert of experts) {
      linear(`${prefix}.feed_forward${expert}.w1`, hiddenDim, dim);
      linear(`${prefix}.feed_forward${expert}.w2`, dim, hiddenDim);
      if (config.preset === 'llama') linear(`${prefix}.feed_forward${expert}.w3`, hiddenDim, dim);
    }
  }
  norm('norm');
  if (!config.tiedEmbeddings) add('output.weight', [vocabSize, dim]);
  return specs;
}

/** At most this many names are listed per kind of problem. */
const LIST_LIMIT = 12;

function list(label: string, items: readonly string[]): string {
  const shown = items.slice(0, LIST_LIMIT).join(', ');
  const more = items.length > LIST_LIMIT ? `, ... and ${items.length - LIST_LIMIT} more` : '';
  return `${label} (${items.length}): ${shown}${more}`;
}

/**
 * Checks loaded tensors against the parameters of `config` and returns them in canonical order. Missing and
 * unexpected names, wrong shapes, integer tensors and duplicates are all reported in one error naming `source`;
 * an invalid config is refused first. `compact` names the weights held only in a compact form (a GGUF file's
 * quantized blocks or 16-bit halves, loaded with `weights: 'quantized'`) with their shapes: each stands for its
 * float32 tensor, which `tensors` then need not hold, and is checked against the config's shape.
 */
export function validateTensors(
  config: CheckpointConfig,
  tensors: readonly StoredTensor[],
  source: string,
  compact: readonly TensorSpec[] = [],
): NamedTensor[] {
  if (isMambaConfig(config)) validateMambaConfig(config, source);
  else validateConfig(config, source);
  const byName = new Map<string, StoredTensor>();
  const duplicates: string[] = [];
  for (const tensor of tensors) {
    if (byName.has(tensor.name)) duplicates.push(tensor.name);
    byName.set(tensor.name, tensor);
  }
  const compactByName = new Map(compact.map((spec) => [spec.name, spec]));
  const expected = expectedTensors(config);
  const expectedNames = new Set(expected.map((spec) => spec.name));
  const missing: string[] = [];
  const wrongShape: string[] = [];
  const wrongType: string[] = [];
  const ordered: NamedTensor[] = [];
  for (const spec of expected) {
    const tensor = byName.get(spec.name);
    const stand = compactByName.get(spec.name);
    if (tensor === undefined && stand !== undefined) {
      if (showShape(stand.shape) !== showShape(spec.shape)) {
        wrongShape.push(`${spec.name} expected ${showShape(spec.shape)}, found ${showShape(stand.shape)}`);
      }
    } else if (tensor === undefined) {
      missing.push(`${spec.name} ${showShape(spec.shape)}`);
    } else if (showShape(tensor.shape) !== showShape(spec.shape)) {
      wrongShape.push(`${spec.name} expected ${showShape(spec.shape)}, found ${showShape(tensor.shape)}`);
    } else if (tensor.data.length !== sizeOf(spec.shape)) {
      wrongShape.push(`${spec.name} ${showShape(spec.shape)} has ${tensor.data.length} values`);
    } else if (tensor.data instanceof Int32Array) {
      wrongType.push(spec.name);
    } else {
      ordered.push({ name: spec.name, shape: tensor.shape, data: tensor.data });
    }
  }
  const unexpected = [...byName.values(), ...compact]
    .filter((tensor) => !expectedNames.has(tensor.name))
    .map((tensor) => `${tensor.name} ${showShape(tensor.shape)}`);
  const problems = [
    missing.length > 0 ? list('missing', missing) : '',
    unexpected.length > 0 ? list('unexpected', unexpected) : '',
    wrongShape.length > 0 ? list('wrong shape', wrongShape) : '',
    wrongType.length > 0 ? list('integer (I32) instead of float', wrongType) : '',
    duplicates.length > 0 ? list('given twice', duplicates) : '',
  ].filter((problem) => problem !== '');
  if (problems.length > 0) {
    throw new Error(
      `${source}: the tensors do not match the model of its config (${describeConfig(config)}) — ${problems.join('; ')}. Check that the weights and the config belong together.`,
    );
  }
  return ordered;
}
