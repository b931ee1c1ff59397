#!/usr/bin/env node
// @ts-check
// Installs the packed packages the way a user does and uses them, outside the workspace:
// build, `pnpm pack` every public package, `npm install` the tarballs (with Vite and TypeScript) into a
// fresh project under the system temp folder, then
//   1. an ES module script (tokenizer and sampler alone, then a tiny seeded model generating greedily),
//   2. a CommonJS script that require()s every package (require(esm): Node 20.19 or newer) and generates,
//   3. tsc --noEmit, strict, without skipLibCheck, over every package's public API,
//   4. a Vite build of a page generating in headless Chromium (playwright-core, /usr/bin/chromium),
//   5. the `loom` command of the packed @loom/cli: `npx loom --help` and
//      `npx loom generate -m model.bin -p "Once upon a time" -n 50` on stories260K (../shared/data),
// and checks that the first three generations give the same tokens. Stops at the first failure, naming the
// step, and keeps the project for a look (its path is printed); removes it on success.
// Files of the project: scripts/consumer/. LOOM_CHROMIUM overrides the browser's path.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { buildPackages, packAll, root, run } from './lib/packages.mjs';

const CHROMIUM = process.env.LOOM_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
/** Installed beside the tarballs, at the workspace's versions. */
const TOOLS = ['vite@8.3.8', 'typescript@5.9.3'];
const PAGE_TIMEOUT_MS = 60_000;

const project = mkdtempSync(join(tmpdir(), 'loom-consumer-'));
let current = 'set-up';
try {
  step('Node version', checkNode);
  step('build', () => buildPackages());
  const tarballs = step('pack', () => {
    mkdirSync(join(project, 'tarballs'));
    const libraries = packAll(join(project, 'tarballs')).map((p) => p.tarball);
    return [...libraries, packCli(join(project, 'tarballs'))];
  });
  step('npm install', () => install(tarballs));
  const esm = step('ES module script', () => result(node(['esm.mjs'])));
  const cjs = step('CommonJS require', () => result(node(['cjs.cjs'])));
  step('tsc (strict, no skipLibCheck)', () =>
    run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', '.'], { cwd: project }),
  );
  step('vite build', () =>
    run(join(project, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn'], { cwd: project }),
  );
  const browser = await stepAsync('Chromium page', () => inChromium(join(project, 'dist')));
  step('same tokens everywhere', () => {
    for (const [label, other] of [
      ['CommonJS', cjs],
      ['Chromium', browser],
    ]) {
      if (JSON.stringify(other) !== JSON.stringify(esm)) {
        throw new Error(
          `the ${label} run generated ${JSON.stringify(other)}, the ES module run ${JSON.stringify(esm)}`,
        );
      }
    }
    if (esm.tokens.length === 0) throw new Error('the generation produced no token');
  });
  step('npx loom', runLoom);
  console.log(
    `consumer-test: passed; ES module, CommonJS and Chromium all generated [${esm.tokens.join(', ')}] (${esm.stopReason})`,
  );
  rmSync(project, { recursive: true, force: true });
} catch (error) {
  console.error(`consumer-test: FAILED at "${current}": ${error instanceof Error ? error.message : error}`);
  console.error(`consumer-test: the project is kept at ${project}`);
  process.exitCode = 1;
}

/**
 * @template T
 * @param {string} name
 * @param {() => T} fn
 * @returns {T}
 */
function step(name, fn) {
  current = name;
  console.log(`::: consumer-test: ${name}`);
  return fn();
}

/**
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function stepAsync(name, fn) {
  current = name;
  console.log(`::: consumer-test: ${name}`);
  return await fn();
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    throw new Error(`Node ${process.versions.node} cannot require() ES modules; run on Node 20.19 or newer`);
  }
  console.log(`Node ${process.versions.node}`);
}

/**
 * Builds and packs the `loom` command (apps/cli), whose tarball bundles the private apps.
 * @param {string} dest
 */
function packCli(dest) {
  run('pnpm', ['--filter', '@loom/cli', 'build']);
  const out = execFileSync('pnpm', ['pack', '--json', '--pack-destination', dest], {
    cwd: join(root, 'apps', 'cli'),
    encoding: 'utf8',
  });
  return JSON.parse(out).filename;
}

/** `npx loom --help` lists the commands; `npx loom generate` continues a prompt with a llama2.c model. */
function runLoom() {
  const models = join(root, '..', 'shared', 'data', 'models');
  cpSync(join(models, 'stories260K.bin'), join(project, 'model.bin'));
  cpSync(join(models, 'tok512.bin'), join(project, 'tokenizer.bin'));
  const npx = (/** @type {string[]} */ args) =>
    execFileSync('npx', ['--no-install', 'loom', ...args], { cwd: project, encoding: 'utf8' });
  const help = npx(['--help']);
  for (const command of ['train', 'generate', 'chat', 'tokenize', 'bench', 'convert']) {
    if (!help.includes(command)) throw new Error(`\`loom --help\` does not list ${command}:\n${help}`);
  }
  const text = npx(['generate', '-m', 'model.bin', '-p', 'Once upon a time', '-n', '50']);
  if (!text.startsWith('Once upon a time') || text.trim().length <= 'Once upon a time'.length) {
    throw new Error(
      `\`loom generate\` printed ${JSON.stringify(text)}; expected the prompt and its continuation`,
    );
  }
  console.log(text.trim());
}

/** @param {string[]} tarballs */
function install(tarballs) {
  const manifest = { name: 'loom-consumer', private: true, type: 'module' };
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  cpSync(join(root, 'scripts', 'consumer'), project, { recursive: true });
  const flags = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
  run('npm', ['install', ...flags, ...tarballs, ...TOOLS], { cwd: project });
}

/**
 * Runs a script of the project with this Node; returns its output.
 * @param {string[]} args
 */
function node(args) {
  try {
    return execFileSync(process.execPath, args, {
      cwd: project,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    const out = /** @type {{ stdout?: string }} */ (error).stdout ?? '';
    throw new Error(`\`node ${args.join(' ')}\` failed${out ? `; it printed:\n${out}` : ''}`);
  }
}

/**
 * The `RESULT {json}` line a script printed.
 * @param {string} output
 * @returns {{ tokens: number[], text: string, stopReason: string }}
 */
function result(output) {
  const line = output.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no RESULT line in the output:\n${output}`);
  return JSON.parse(line.slice('RESULT '.length));
}

/**
 * Serves the Vite build on 127.0.0.1, opens it in headless Chromium and reads the page's result.
 * @param {string} dist
 */
async function inChromium(dist) {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set LOOM_CHROMIUM`);
  /** @type {Record<string, string>} */
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = createServer((req, res) => {
    const path = normalize(join(dist, new URL(req.url ?? '/', 'http://x').pathname));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(dist) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: false, args: CHROMIUM_ARGS });
  try {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the page server has no TCP port');
    const page = await browser.newPage();
    /** @type {string[]} */
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`http://127.0.0.1:${address.port}/`);
    const handle = await page
      .waitForFunction(() => document.getElementById('result')?.textContent || undefined, undefined, {
        timeout: PAGE_TIMEOUT_MS,
      })
      .catch(() => {
        throw new Error(
          `the page reported nothing in ${PAGE_TIMEOUT_MS / 1000} s; page errors: ${errors.join('; ') || 'none'}`,
        );
      });
    const text = String(await handle.jsonValue());
    if (!text.startsWith('RESULT ')) throw new Error(`the page failed: ${text}`);
    return result(text);
  } finally {
    await browser.close();
    server.close();
  }
}
