import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FuzzCase } from './make-case';
import type { Target } from './seeds';

/** The file in a saved case's folder that says what the case is; the case's input files sit beside it. */
const ABOUT = 'case.json';

interface About {
  readonly seed: string;
  readonly target: Target;
  readonly entry: string;
  readonly found: string;
}

/** Saves a case as a folder: its input files and `case.json` ({ seed, target, entry, found }). */
export function saveCase(dir: string, testCase: FuzzCase, found: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(testCase.files)) writeFileSync(join(dir, name), bytes);
  const about: About = { seed: testCase.seed, target: testCase.target, entry: testCase.entry, found };
  writeFileSync(join(dir, ABOUT), `${JSON.stringify(about, null, 2)}\n`);
}

/** Reads a case saved by `saveCase`. */
export function loadCase(dir: string): FuzzCase {
  const about = JSON.parse(readFileSync(join(dir, ABOUT), 'utf8')) as About;
  const files: Record<string, Uint8Array> = {};
  for (const name of readdirSync(dir)) {
    if (name !== ABOUT) files[name] = new Uint8Array(readFileSync(join(dir, name)));
  }
  return { seed: about.seed, target: about.target, entry: about.entry, files };
}
