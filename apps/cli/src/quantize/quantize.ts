import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { existingUserPath, readUserFile, userPath } from '@loom/generate/paths';
import {
  collectInputStatistics,
  type GgufWeightType,
  type GgufWriteOptions,
  ggufTensorTypes,
  type InputStatistics,
  isMambaConfig,
  type LoadedModel,
  loadModelFile,
  type ModelConfig,
  serializeGguf,
  transformerFromTensors,
  writeFileAtomic,
} from '@loom/models';
import { setBackend } from '@loom/tensor';
import { type CarriedTokenizer, carriedTokenizer, ggufVocabulary } from '../convert/carried-tokenizer';
import { UsageError } from '../flags';
import type { LoomIo } from '../io';
import { type Calibration, parseQuantizeArgs, type QuantizeCommand, USAGE } from './args';
import { calibrationWindows, sampleCalibrationTokens } from './calibration';

type Quantizing = Extract<QuantizeCommand, { kind: 'quantize' }>;

/**
 * llama-quantize's rule for the output projection (output.weight, or the token embeddings a tied model projects
 * with): the logits are the most sensitive to rounding, so it stays Q8_0 in a Q8_0 file and is Q6_K otherwise
 * (which falls back to Q8_0 when its rows are not whole super-blocks).
 */
function outputProjectionType(config: ModelConfig, type: GgufWeightType): Record<string, GgufWeightType> {
  const name = config.tiedEmbeddings ? 'tok_embeddings.weight' : 'output.weight';
  return { [name]: type === 'Q8_0' ? 'Q8_0' : 'Q6_K' };
}

/** "43 Q4_K, 13 F32": how many tensors each type holds, the most common first. */
function typeCounts(types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${n} ${type}`)
    .join(', ');
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

/** What calibration was done, for the summary line. */
interface Calibrated {
  readonly statistics: ReadonlyMap<string, InputStatistics> | undefined;
  readonly note: string;
}

/**
 * The input statistics the Q4_0 matrices are rounded with (see --calibration), or none: for `none`, when no matrix
 * is Q4_0, or (with a note on stderr) when there is no BOS token to start the model's own text from.
 */
async function calibrate(
  calibration: Calibration,
  loaded: LoadedModel,
  carried: CarriedTokenizer | undefined,
  input: string,
  io: LoomIo,
): Promise<Calibrated> {
  const none = { statistics: undefined, note: '' };
  if (calibration.kind === 'none' || isMambaConfig(loaded.config)) return none;
  const tokenizer = carried?.tokenizer;
  if (calibration.kind === 'file' && tokenizer === undefined) {
    throw new UsageError(
      `--calibration ${calibration.path}: needs a tokenizer to read the text; pass --tokenizer`,
    );
  }
  const bos = tokenizer?.bos;
  if (calibration.kind === 'auto' && bos === undefined) {
    io.stderr.write(
      'quantize: no tokenizer with a BOS token to start calibration text from, so Q4_0 matrices are rounded as llama.cpp rounds them; pass --tokenizer or --calibration FILE\n',
    );
    return none;
  }
  setBackend(new CpuBackend());
  const model = transformerFromTensors(loaded, input).eval();
  try {
    const sequences =
      calibration.kind === 'file' && tokenizer !== undefined
        ? calibrationWindows(
            new TextDecoder('utf-8', { fatal: true }).decode(
              readUserFile('--calibration', calibration.path, io.env),
            ),
            tokenizer,
            model,
            calibration.path,
          )
        : await sampleCalibrationTokens(model, bos ?? 0);
    const tokens = sequences.reduce((n, s) => n + s.length, 0);
    const source = calibration.kind === 'file' ? calibration.path : 'text the model wrote';
    return {
      statistics: await collectInputStatistics(model, sequences),
      note: `; Q4_0 calibrated on ${tokens} tokens of ${source}`,
    };
  } finally {
    model.dispose();
  }
}

async function quantize(command: Quantizing, io: LoomIo): Promise<void> {
  const input = existingUserPath('IN', command.input, io.env);
  const out = userPath(command.output, io.env);
  if (input === out) throw new UsageError(`OUT is IN (${input}); write the quantized model elsewhere`);
  const loaded = loadModelFile(input);
  const carried = carriedTokenizer(command.tokenizer, input, loaded.tokenizerJson, io.env);
  const vocabulary = carried === undefined ? undefined : ggufVocabulary(carried);
  const plain: GgufWriteOptions = {
    weightType: command.type,
    vocabulary,
    tensorTypes: command.pure ? {} : outputProjectionType(loaded.config, command.type),
  };
  const types = ggufTensorTypes(loaded.tensors, plain).map((tensor) => tensor.type);
  const { statistics, note } = types.includes('Q4_0')
    ? await calibrate(command.calibration, loaded, carried, input, io)
    : { statistics: undefined, note: '' };
  const bytes = serializeGguf(loaded.config, loaded.tensors, { ...plain, statistics });
  mkdirSync(dirname(out), { recursive: true });
  writeFileAtomic(out, bytes);
  const inputBytes = statSync(input).isFile() ? ` (${mib(statSync(input).size)})` : '';
  io.stdout.write(
    `${command.input} (${loaded.format})${inputBytes} -> ${command.output} (${mib(bytes.length)}): ${typeCounts(types)}${note}\n`,
  );
  const asked = ggufTensorTypes(loaded.tensors, { weightType: command.type }).map((tensor) => tensor.type);
  const fellBack = asked.filter((type) => type !== command.type && type !== 'F32').length;
  if (fellBack > 0) {
    io.stderr.write(
      `quantize: ${fellBack} matrices have rows that are not whole ${command.type} blocks of 256 and were stored in their fallback type\n`,
    );
  }
  if (vocabulary === undefined) {
    const why =
      carried === undefined ? 'none found' : 'Loom writes SentencePiece (llama2.c) vocabularies only';
    io.stderr.write(`quantize: no vocabulary in the GGUF file (${why}); pass --tokenizer to loom generate\n`);
  }
}

/** Runs `loom quantize`; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: LoomIo): Promise<number> {
  try {
    const command = parseQuantizeArgs(argv);
    if (command.kind === 'help') io.stdout.write(`${USAGE}\n`);
    else await quantize(command, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof UsageError;
    io.stderr.write(`quantize: ${message}${usage ? '; see loom quantize --help' : ''}\n`);
    return usage ? 2 : 1;
  }
}
