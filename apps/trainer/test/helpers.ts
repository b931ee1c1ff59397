import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { TextSink, TrainIO } from '../src/io';
import { generateStories } from '../src/stories';

/** A sink that keeps what is written. */
export class Collector implements TextSink {
  text = '';
  write(text: string): boolean {
    this.text += text;
    return true;
  }
}

export function collectingIO(): { io: TrainIO; stdout: Collector; stderr: Collector } {
  const stdout = new Collector();
  const stderr = new Collector();
  return { io: { stdout, stderr }, stdout, stderr };
}

const made: string[] = [];
// Registered on the importing test file: its temporary directories go when it finishes.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary directory, removed after the test file. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loom-trainer-'));
  made.push(dir);
  return dir;
}

/** A small text file (30k characters of generated stories) in a new temporary directory. */
export function smallCorpus(): { dir: string; data: string } {
  const dir = tempDir();
  const data = join(dir, 'stories.txt');
  writeFileSync(data, generateStories(5, 30_000));
  return { dir, data };
}

/** A model and run small enough for a test to train in a moment. */
export const TINY = [
  '--layers',
  '1',
  '--heads',
  '2',
  '--dim',
  '16',
  '--block',
  '16',
  '--batch',
  '4',
  '--warmup',
  '2',
];

/** TINY plus short evaluations and no sample. */
export const TINY_QUIET = [...TINY, '--eval-batches', '2', '--sample-tokens', '0'];
