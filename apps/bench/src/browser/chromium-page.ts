import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
// By path: the chat app's Chromium flags and the server's static files, neither of them a published module.
import { CHROMIUM, CHROMIUM_FLAGS } from '../../../chat/test/chromium';
import { ISOLATION_HEADERS, sendStaticFile } from '../../../server/src/static-files';
import type { BenchPage, BenchReply, BenchRequest } from './protocol';

/** Chromium's flags that put WebGPU and WebGL on SwiftShader; left out to use the machine's own GPU. */
const SWIFTSHADER_FLAGS = new Set([
  '--use-angle=swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--enable-unsafe-swiftshader',
]);

export interface BenchBrowserOptions {
  /** Model files to offer under /model/NAME (their base names). */
  readonly modelFiles?: readonly string[];
  /** Keep WebGPU on SwiftShader (the default: a headless machine without a GPU); false uses the machine's GPU. */
  readonly swiftShader?: boolean;
  /** Serve the page cross-origin isolated (COOP/COEP, the default); false drops those headers. */
  readonly isolated?: boolean;
}

/** The bench page open in headless Chromium, its build folder and its server; `close` removes them all. */
export interface BenchBrowser {
  /** Sends a request to the page's model worker; an error reply is thrown, naming the request. */
  request(request: BenchRequest): Promise<BenchReply>;
  /** The threads the CPU backend uses on the page's main thread. */
  mainThreadThreads(): Promise<number>;
  /** Whether the page is cross-origin isolated. */
  crossOriginIsolated(): Promise<boolean>;
  close(): Promise<void>;
}

/** Builds the bench page (Vite, the workspace packages from their sources) into `outDir`. */
async function buildPage(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: import.meta.dirname,
    logLevel: 'error',
    resolve: { conditions: ['@loom/source'] },
    worker: { format: 'es' },
    build: { target: 'es2022', outDir, emptyOutDir: true },
  });
}

/** Serves `root` and the model files, cross-origin isolated; resolves once it listens on a free port. */
async function servePage(root: string, modelFiles: readonly string[]): Promise<Server> {
  const models = new Map(modelFiles.map((file) => [`/model/${encodeURIComponent(basename(file))}`, file]));
  const site = { root, missing: `${root}: the bench page was not built` };
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const file = models.get(path);
    if (file === undefined) {
      sendStaticFile(request, response, site).catch(() => response.destroy());
      return;
    }
    const body = readFileSync(file);
    response.writeHead(200, {
      ...ISOLATION_HEADERS,
      'Cross-Origin-Resource-Policy': 'same-origin',
      'content-type': 'application/octet-stream',
      'content-length': body.byteLength,
    });
    response.end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return server;
}

/** Drops the isolation headers of every response, for a page that is not cross-origin isolated. */
async function withoutIsolation(page: Page): Promise<void> {
  await page.route('**/*', async (route) => {
    const response = await route.fetch();
    const headers = { ...response.headers() };
    for (const name of Object.keys(ISOLATION_HEADERS)) delete headers[name.toLowerCase()];
    await route.fulfill({ response, headers });
  });
}

/** Builds and serves the bench page and opens it in headless Chromium (CHROMIUM, or LOOM_CHROMIUM). */
export async function openBenchBrowser(options: BenchBrowserOptions = {}): Promise<BenchBrowser> {
  const dir = await mkdtemp(join(tmpdir(), 'loom-bench-browser-'));
  let server: Server | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    server?.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await buildPage(join(dir, 'dist'));
    server = await servePage(join(dir, 'dist'), options.modelFiles ?? []);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the bench server has no TCP port');
    const args =
      options.swiftShader === false
        ? CHROMIUM_FLAGS.filter((f) => !SWIFTSHADER_FLAGS.has(f))
        : CHROMIUM_FLAGS;
    browser = await chromium
      .launch({ executablePath: CHROMIUM, headless: true, args })
      .catch((error: unknown) => {
        throw new Error(
          `cannot start Chromium at ${CHROMIUM} (install chromium, or set LOOM_CHROMIUM to its path): ${String(error)}`,
        );
      });
    const page = await browser.newPage();
    if (options.isolated === false) await withoutIsolation(page);
    await page.goto(`http://127.0.0.1:${address.port}/`);
    await page.waitForFunction(() => 'loomBench' in window);
    const bench = () => page.evaluateHandle(() => (window as unknown as { loomBench: BenchPage }).loomBench);
    return {
      async request(request) {
        const reply = await (await bench()).evaluate((b, r) => b.request(r), request);
        if (reply.kind === 'error')
          throw new Error(`the browser's ${request.kind} request failed: ${reply.message}`);
        return reply;
      },
      mainThreadThreads: async () => (await bench()).evaluate((b) => b.mainThreadThreads()),
      crossOriginIsolated: async () => (await bench()).evaluate((b) => b.crossOriginIsolated),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
