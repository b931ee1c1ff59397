import { CpuBackend } from '@loom/backend-cpu';
import {
  halfLinearWeights,
  type NamedQuantizedTensor,
  quantizedLinearWeights,
  useHalfWeights,
  useQuantizedWeights,
} from '@loom/models';
import { TransformerLM } from '@loom/nn';
import { type Backend, setBackend } from '@loom/tensor';
import { UsageError } from '../flags';
import { stories15MShape, stories110MShape } from '../model-shapes';
import { median } from '../stats';
import type { Row } from '../suite';

/**
 * The model shapes the quantized decode rows can run, by the name `--quantized` takes; with an output projection of
 * their own (as llama.cpp's GGUF conversion writes them), so it is quantized too.
 */
const SHAPES = {
  '15M': () => ({ ...stories15MShape(256), tiedEmbeddings: false }),
  '110M': () => ({ ...stories110MShape(256), tiedEmbeddings: false }),
} as const;
type ShapeName = keyof typeof SHAPES;

/** How each model's linear layers hold their weights. */
const FORMATS = ['f32', 'q8_0', 'q4_0', 'q4_k', 'bf16', 'f16'] as const;
type Format = (typeof FORMATS)[number];
/** The formats whose linear layers hold 16-bit floats. */
type HalfFormat = Extract<Format, 'bf16' | 'f16'>;

/** The shapes named by `--quantized` (a comma list of 15M, 110M; `none` for no rows). */
export function quantizedShapes(flag: string | undefined): ShapeName[] {
  if (flag === 'none') return [];
  const names = (flag ?? '15M,110M').split(',');
  for (const name of names) {
    if (!(name in SHAPES))
      throw new UsageError(`--quantized ${flag}: expected a comma list of 15M, 110M, or none`);
  }
  return names as ShapeName[];
}

export interface QuantizedDecodeOptions {
  readonly shapes: readonly ShapeName[];
  readonly threads: readonly number[];
  readonly steps: number;
  readonly rounds: number;
  /** Milliseconds of `steps` greedy decode steps from a fresh session (the generate suite's timer). */
  readonly decodeMs: (model: TransformerLM, steps: number) => Promise<number>;
}

/**
 * Decode tokens/s of random models of each shape on the CPU backend, on each thread count, with the linear layers
 * in f32, Q8_0, Q4_0 and Q4_K (Q4_0 where a layer's input is not a multiple of 256; quantized in process as
 * llama.cpp's reference quantizer would), BF16 and F16: one model whose products switch between the f32 weights and
 * the blocks or halves of each type, measured in turn every round (f32, Q8_0, Q4_0, Q4_K, BF16, F16, f32, ...), and
 * the ratio of each compact format to f32 (output projections untied, so compacted too). `restore` is set back as
 * the current backend.
 */
export async function quantizedDecodeRows(options: QuantizedDecodeOptions, restore: Backend): Promise<Row[]> {
  const rows: Row[] = [];
  for (const threads of options.threads) {
    const backend = new CpuBackend({ threads });
    await backend.threadsReady();
    setBackend(backend);
    for (const shape of options.shapes) {
      const f32 = new TransformerLM(SHAPES[shape]()).eval();
      const quantized = new TransformerLM(SHAPES[shape]()).eval();
      const blocks: Record<Exclude<Format, 'f32' | HalfFormat>, NamedQuantizedTensor[]> = {
        q8_0: await quantizedLinearWeights(f32, 'q8_0'),
        q4_0: await quantizedLinearWeights(f32, 'q4_0'),
        q4_k: await quantizedLinearWeights(f32, 'q4_k'), // layers whose input is not whole super-blocks: Q4_0
      };
      const halves = { bf16: await halfLinearWeights(f32, 'bf16'), f16: await halfLinearWeights(f32, 'f16') };
      const rates: Record<Format, number[]> = { f32: [], q8_0: [], q4_0: [], q4_k: [], bf16: [], f16: [] };
      const modelOf = (format: Format): TransformerLM => {
        if (format === 'f32') return f32;
        if (format === 'bf16' || format === 'f16')
          useHalfWeights(quantized, halves[format], `${shape} ${format}`);
        else useQuantizedWeights(quantized, blocks[format], `${shape} ${format}`);
        return quantized;
      };
      for (let round = 0; round < options.rounds; round++) {
        for (const format of FORMATS) {
          const model = modelOf(format);
          if (round === 0) await options.decodeMs(model, 8);
          rates[format].push((options.steps * 1000) / (await options.decodeMs(model, options.steps)));
        }
      }
      const name = `stories${shape} shape, ${threads} thread${threads === 1 ? '' : 's'}`;
      for (const format of FORMATS) {
        rows.push({
          model: name,
          measure: `${format} decode ${options.steps} tokens (tok/s)`,
          value: median(rates[format]),
        });
      }
      for (const format of FORMATS.filter((f) => f !== 'f32')) {
        rows.push({
          model: name,
          measure: `${format} / f32 decode (x)`,
          value: median(rates[format]) / median(rates.f32),
        });
      }
      f32.dispose();
      quantized.dispose();
    }
  }
  setBackend(restore);
  return rows;
}
