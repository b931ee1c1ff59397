import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { existingUserPath, userPath } from '@loom/generate/paths';
import {
  type LoadedModel,
  loadModelFile,
  saveCheckpoint,
  serializeGguf,
  toHfConfig,
  toHfTensors,
  writeFileAtomic,
  writeLlama2cFile,
  writeSafetensorsFile,
} from '@loom/models';
import { UsageError } from '../flags';
import type { LoomIo } from '../io';
import { type ConvertCommand, parseConvertArgs, USAGE } from './args';
import {
  type CarriedTokenizer,
  carriedTokenizer,
  ggufVocabulary,
  hfTokenizerFile,
  llama2cTokenizerBytes,
  loomTokenizerJson,
} from './carried-tokenizer';

type Converting = Extract<ConvertCommand, { kind: 'convert' }>;

const utf8 = (text: string) => new TextEncoder().encode(text);

/** What was written: the files, and a note when the tokenizer could not come along. */
interface Written {
  readonly files: readonly string[];
  readonly note?: string;
}

/** Writes `bytes` beside the weights, refusing to replace a different file of that name. */
function writeBeside(path: string, bytes: Uint8Array): void {
  if (existsSync(path) && !Buffer.from(bytes).equals(readFileSync(path))) {
    throw new Error(
      `${path}: exists and holds another tokenizer; remove it or write OUT into another directory`,
    );
  }
  writeFileAtomic(path, bytes);
}

const NO_TOKENIZER = 'no tokenizer found to carry along; pass --tokenizer';

function writeLlama2c(out: string, loaded: LoadedModel, carried: CarriedTokenizer | undefined): Written {
  mkdirSync(dirname(out), { recursive: true });
  writeLlama2cFile(out, loaded.config, loaded.tensors);
  if (carried === undefined) return { files: [out], note: NO_TOKENIZER };
  const bytes = llama2cTokenizerBytes(carried);
  if (bytes === undefined) {
    const note = `a ${carried.tokenizer.kind} tokenizer has no llama2.c form; pass --tokenizer to loom generate`;
    return { files: [out], note: `no tokenizer.bin written (${note})` };
  }
  const path = join(dirname(out), 'tokenizer.bin');
  writeBeside(path, bytes);
  return { files: [out, path] };
}

function writeHf(out: string, loaded: LoadedModel, carried: CarriedTokenizer | undefined): Written {
  mkdirSync(out, { recursive: true });
  const files = [join(out, 'model.safetensors')];
  writeSafetensorsFile(files[0], toHfTensors(loaded.config, loaded.tensors));
  if (carried !== undefined) {
    const { name, bytes } = hfTokenizerFile(carried);
    files.push(join(out, name));
    writeBeside(files[1], bytes);
  }
  // config.json last: until it is there the directory is not a model.
  files.push(join(out, 'config.json'));
  writeFileAtomic(files.at(-1)!, utf8(`${JSON.stringify(toHfConfig(loaded.config), null, 2)}\n`));
  return carried === undefined ? { files, note: NO_TOKENIZER } : { files };
}

function writeLoom(out: string, loaded: LoadedModel, carried: CarriedTokenizer | undefined): Written {
  const tokenizerJson = carried === undefined ? undefined : loomTokenizerJson(carried);
  saveCheckpoint(out, { config: loaded.config, tensors: loaded.tensors, tokenizerJson });
  const names = ['model.safetensors', 'config.json', ...(carried === undefined ? [] : ['tokenizer.json'])];
  const files = names.map((name) => join(out, name));
  return carried === undefined ? { files, note: NO_TOKENIZER } : { files };
}

function writeGguf(
  command: Converting,
  out: string,
  loaded: LoadedModel,
  carried: CarriedTokenizer | undefined,
): Written {
  const vocabulary = carried === undefined ? undefined : ggufVocabulary(carried);
  mkdirSync(dirname(out), { recursive: true });
  writeFileAtomic(
    out,
    serializeGguf(loaded.config, loaded.tensors, { weightType: command.weightType, vocabulary }),
  );
  if (vocabulary !== undefined) return { files: [out] };
  const why = carried === undefined ? 'none found' : 'Loom writes SentencePiece (llama2.c) vocabularies only';
  return { files: [out], note: `no vocabulary in the GGUF file (${why}); pass --tokenizer to loom generate` };
}

function convert(command: Converting, io: LoomIo): void {
  const input = existingUserPath('IN', command.input, io.env);
  const out = userPath(command.output, io.env);
  if (input === out) throw new UsageError(`OUT is IN (${input}); write the conversion elsewhere`);
  const loaded = loadModelFile(input);
  const carried = carriedTokenizer(command.tokenizer, input, loaded.tokenizerJson, io.env);
  const written =
    command.to === 'llama2c'
      ? writeLlama2c(out, loaded, carried)
      : command.to === 'hf'
        ? writeHf(out, loaded, carried)
        : command.to === 'loom'
          ? writeLoom(out, loaded, carried)
          : writeGguf(command, out, loaded, carried);
  io.stdout.write(
    `${command.input} (${loaded.format}) -> ${command.to}: wrote ${written.files.join(', ')}\n`,
  );
  if (written.note !== undefined) io.stderr.write(`convert: ${written.note}\n`);
}

/** Runs `loom convert`; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: LoomIo): Promise<number> {
  try {
    const command = parseConvertArgs(argv);
    if (command.kind === 'help') io.stdout.write(`${USAGE}\n`);
    else convert(command, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof UsageError;
    io.stderr.write(`convert: ${message}${usage ? '; see loom convert --help' : ''}\n`);
    return usage ? 2 : 1;
  }
}
