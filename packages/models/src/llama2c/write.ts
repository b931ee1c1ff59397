import { sizeOf } from '@loom/tensor';
import { describeConfig, type ModelConfig } from '../config';
import type { NamedTensor } from '../tensor';
import { validateTensors } from '../validate';
import {
  LLAMA2C_HEADER_BYTES,
  LLAMA2C_NORM_EPS,
  LLAMA2C_ROPE_THETA,
  type Llama2cSegment,
  llama2cFloatCount,
  llama2cLayout,
} from './layout';

/**
 * The legacy RoPE table llama2.c exports write (and run.c skips): cos or sin of `t * theta^(-2i/headSize)` for
 * each position t and pair i, computed in float32 steps as the PyTorch export does.
 */
function ropeTable(part: 'cos' | 'sin', shape: readonly number[], headSize: number): Float32Array {
  const [seqLen, pairs] = shape;
  const table = new Float32Array(seqLen * pairs);
  const f = Math.fround;
  const rotate = part === 'cos' ? Math.cos : Math.sin;
  for (let pair = 0; pair < pairs; pair++) {
    const frequency = f(1 / f(LLAMA2C_ROPE_THETA ** f((2 * pair) / headSize)));
    for (let position = 0; position < seqLen; position++) {
      table[position * pairs + pair] = rotate(f(position * frequency));
    }
  }
  return table;
}

function segmentValues(
  segment: Llama2cSegment,
  byName: ReadonlyMap<string, NamedTensor>,
  headSize: number,
): Float32Array[] {
  if (segment.kind === 'rope-table') return [ropeTable(segment.part, segment.shape, headSize)];
  return segment.names.map((name) => byName.get(name)!.data);
}

/**
 * Serialises a llama-preset model as a legacy (version 0) llama2.c checkpoint that `run.c` and `parseLlama2c`
 * read: the 7-int32 header (vocab negated when the classifier is untied), then the float32 tensors in file order.
 * The format cannot record biases, a norm eps other than 1e-5 or a RoPE theta other than 10000, so such models are
 * refused.
 */
export function serializeLlama2c(
  config: ModelConfig,
  tensors: readonly NamedTensor[],
  source = 'model',
): Uint8Array {
  const unsupported = [
    config.preset !== 'llama' ? `preset ${config.preset} (only llama)` : '',
    config.bias ? 'biases' : '',
    config.qkvBias ? 'q/k/v biases' : '',
    config.qkNorm ? 'q/k norms' : '',
    config.slidingWindow !== undefined
      ? `slidingWindow=${config.slidingWindow} (run.c attends to everything)`
      : '',
    config.moe !== undefined ? `${config.moe.experts} experts (run.c has one feed-forward)` : '',
    config.headDim !== undefined && config.headDim !== config.dim / config.numHeads
      ? `headDim=${config.headDim} (run.c uses dim / numHeads)`
      : '',
    config.normEps !== LLAMA2C_NORM_EPS ? `normEps=${config.normEps} (run.c uses ${LLAMA2C_NORM_EPS})` : '',
    config.ropeTheta !== LLAMA2C_ROPE_THETA
      ? `ropeTheta=${config.ropeTheta} (run.c uses ${LLAMA2C_ROPE_THETA})`
      : '',
    config.ropeScaling !== undefined ? `ropeScaling ${config.ropeScaling.type} (run.c has plain RoPE)` : '',
  ].filter((reason) => reason !== '');
  if (unsupported.length > 0) {
    throw new Error(
      `${source}: a llama2.c checkpoint cannot hold this model (${describeConfig(config)}): ${unsupported.join('; ')} — save it as safetensors instead`,
    );
  }
  const byName = new Map(validateTensors(config, tensors, source).map((tensor) => [tensor.name, tensor]));
  const segments = llama2cLayout(config);
  const out = new Uint8Array(LLAMA2C_HEADER_BYTES + 4 * llama2cFloatCount(segments));
  const header = new DataView(out.buffer, 0, LLAMA2C_HEADER_BYTES);
  const vocab = config.tiedEmbeddings ? config.vocabSize : -config.vocabSize;
  const { dim, hiddenDim, numLayers, numHeads, numKvHeads, maxSeqLen } = config;
  [dim, hiddenDim, numLayers, numHeads, numKvHeads, vocab, maxSeqLen].forEach((value, index) => {
    header.setInt32(index * 4, value, true);
  });
  const floats = new Float32Array(out.buffer, LLAMA2C_HEADER_BYTES);
  const headSize = config.dim / config.numHeads;
  let offset = 0;
  for (const segment of segments) {
    for (const values of segmentValues(segment, byName, headSize)) {
      floats.set(values, offset);
      offset += sizeOf(segment.shape);
    }
  }
  return out;
}
