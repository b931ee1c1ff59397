import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint, saveCheckpoint, writeFileAtomic } from '../src/index';
import { randomModel, tempDir, tinyGpt2 } from './helpers';

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  expect(child.status).toBe(0);
  return child.pid;
}

describe('stale temporary files', () => {
  it("a successful save removes its targets' temporary files that dead writers left, and nothing else", () => {
    const dir = tempDir();
    const saved = { config: tinyGpt2, tensors: randomModel(tinyGpt2) };
    saveCheckpoint(dir, saved);
    const dead = deadPid();
    const stale = [`model.safetensors.tmp-${dead}-0123456789ab`, `config.json.tmp-${dead}-ba9876543210`];
    const kept = [
      `model.safetensors.tmp-${process.pid}-0123456789ab`, // this process: perhaps being written
      `model.safetensors.tmp-${process.ppid}-0123456789ab`, // a live process
      `notes.txt.tmp-${dead}-0123456789ab`, // another target
      `model.safetensors.tmp-${dead}-not-hex`, // not a name tempName makes
      'notes.txt',
    ];
    for (const name of [...stale, ...kept]) writeFileSync(join(dir, name), 'x'.repeat(1000));
    saveCheckpoint(dir, saved);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'model.safetensors', ...kept].sort());
    expect(loadCheckpoint(dir).tensors).toEqual(saved.tensors);

    writeFileAtomic(join(dir, 'notes.txt'), new TextEncoder().encode('new notes'));
    expect(readdirSync(dir)).not.toContain(`notes.txt.tmp-${dead}-0123456789ab`);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('new notes');
  });
});
