import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readRegularFile } from '@loom/models';

/** pnpm runs the script inside the app; user paths are relative to where pnpm was started (INIT_CWD). */
export function userPath(path: string, env: NodeJS.ProcessEnv): string {
  return resolve(env.INIT_CWD ?? process.cwd(), path);
}

/** The bytes of a file named by a flag; a missing or unreadable file is an error naming both. */
export function readUserFile(flag: string, path: string, env: NodeJS.ProcessEnv): Uint8Array {
  const absolute = userPath(path, env);
  if (!existsSync(absolute))
    throw new Error(`${flag} ${path} (${absolute}): cannot read it (ENOENT); check the path`);
  try {
    return readRegularFile(absolute, `the file of ${flag}`);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error)) throw error; // refused by name: not a regular file, too large
    throw new Error(`${flag} ${path} (${absolute}): cannot read it (${String(error.code)}); check the path`);
  }
}

/** The absolute path of a file or directory named by a flag; an error naming both when it does not exist. */
export function existingUserPath(flag: string, path: string, env: NodeJS.ProcessEnv): string {
  const absolute = userPath(path, env);
  if (!existsSync(absolute)) {
    throw new Error(`${flag} ${path} (${absolute}): no such file or directory; check the path`);
  }
  return absolute;
}

/** Tokenizer files looked for beside a model, in this order. */
const TOKENIZER_NAMES = ['tokenizer.json', 'tokenizer.bin'];

/** A tokenizer file in the model's directory (or beside its file), if there is one. */
export function tokenizerBeside(modelPath: string): string | undefined {
  const dir = existsSync(modelPath) && statSync(modelPath).isDirectory() ? modelPath : dirname(modelPath);
  return TOKENIZER_NAMES.map((name) => join(dir, name)).find((path) => existsSync(path));
}
