import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const APP = join(import.meta.dirname, '..');
const MODEL = join(APP, '../../../shared/data/models/stories260K.bin');

/** Runs `pnpm start` with its own temporary folder until it prints its URL; resolves with the URL. */
function start(tmp: string) {
  const child = spawn(
    process.execPath,
    ['--conditions=@loom/source', '--import', 'tsx', 'src/serve/main.ts', '--model', MODEL, '--port', '0'],
    { cwd: APP, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const url = new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/\S+\//.exec(output);
      if (found) resolve(found[0]);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`pnpm start exited (${code}) before its URL:\n${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, url, exited };
}

describe('pnpm start (the chat page with a model preloaded)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'loom-chat-start-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  /** The page's build folders in the child's temporary folder (tsx keeps its cache there too). */
  const builds = () => readdirSync(tmp).filter((name) => name.startsWith('loom-chat-'));

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`serves the built page and the model, and removes its build folder on ${signal}`, async () => {
      const { child, url, exited } = start(tmp);
      const origin = await url;
      const page = await fetch(origin);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
      const model = await fetch(`${origin}model/stories260K.bin`);
      expect(model.status).toBe(200);
      expect((await model.arrayBuffer()).byteLength).toBeGreaterThan(0);
      expect(builds()).toHaveLength(1);
      child.kill(signal);
      expect(await exited).toBe(status);
      expect(builds()).toEqual([]);
    }, 60_000);
  }
});
