import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { EXACT, firstMismatch, REDUCTION } from '@loom/conformance';
import { build } from 'esbuild';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ADAPTER_MESSAGE } from '../src/index';
import { runChecks } from './browser-checks';
import type { PageReport } from './browser-entry';

/** The Chromium to drive; override with LOOM_CHROMIUM. */
const CHROMIUM = process.env.LOOM_CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-angle=swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--enable-unsafe-swiftshader',
  '--no-sandbox',
  '--disable-gpu-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const onCi = process.env.CI === 'true';

/** Bundles the page entry with esbuild and serves it from 127.0.0.1 (a secure context, so WebGPU is exposed). */
async function serveBundle(dir: string): Promise<Server> {
  await build({
    entryPoints: [join(import.meta.dirname, 'browser-entry.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@loom/source'],
    outfile: join(dir, 'entry.js'),
    logLevel: 'silent',
  });
  const files: Record<string, { type: string; body: string }> = {
    '/': {
      type: 'text/html',
      body: '<!doctype html><title>loom webgpu</title><script type="module" src="/entry.js"></script>',
    },
    '/entry.js': { type: 'text/javascript', body: readFileSync(join(dir, 'entry.js'), 'utf8') },
  };
  const server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    res.writeHead(file ? 200 : 404, { 'content-type': file?.type ?? 'text/plain' });
    res.end(file?.body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  const message = `no Chromium at ${CHROMIUM}: apt-get install chromium, or set LOOM_CHROMIUM to its path`;
  if (onCi) throw new Error(`the WebGPU browser test must run on CI: ${message}`);
  console.warn(`skipping the Chromium test: ${message}`);
}

describe.skipIf(!haveChromium)('headless Chromium (SwiftShader WebGPU)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loom-webgpu-browser-'));
  let server: Server | undefined;
  let context: BrowserContext | undefined;
  let report: PageReport | undefined;

  beforeAll(async () => {
    server = await serveBundle(dir);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the test server has no TCP port');
    const { port } = address;
    context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => window.loomReport !== undefined);
    report = await page.evaluate(() => window.loomReport);
  });

  afterAll(async () => {
    await context?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs matmul, softmax over 32000, grouped-query attention with an offset and more like the CPU reference', async (test) => {
    if (!report) throw new Error('the page reported nothing');
    if (!report.ok) {
      const noAdapter = report.error === NO_ADAPTER_MESSAGE;
      if (noAdapter && !onCi) {
        console.warn(`skipping the Chromium test: ${report.error}`);
        test.skip();
      }
      throw new Error(`the page failed: ${report.error}`);
    }
    console.info(`Chromium WebGPU adapter: ${report.adapter}`);
    const expected = await runChecks(new CpuBackend());
    expect(Object.keys(report.results)).toEqual(Object.keys(expected));
    for (const [name, values] of Object.entries(expected)) {
      const tolerance = name.startsWith('rand') ? EXACT : REDUCTION;
      expect(firstMismatch(report.results[name], values, tolerance), name).toBe(undefined);
    }
  });
});
