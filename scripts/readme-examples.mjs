#!/usr/bin/env node
// @ts-check
// Runs the example of every packages/*/README.md (the first ```ts block under "## Example") and
// checks the output it shows in `// ` comments on its console.log lines (scripts/lib/readme-example.mjs).
// Each example is written to a temporary file in scripts/, whose package depends on every public
// package, and run from the repository root (so `../shared/data` is the shared data) with
// `node --conditions=@loom/source --import tsx`: no build needed. A public package whose README has no
// such example fails; a private one is skipped. Arguments pick packages by folder or name:
//   pnpm readme-examples [tokenizer @loom/models ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareOutput, extractExample, shownOutput } from './lib/readme-example.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const TIMEOUT_MS = 180_000;

const wanted = process.argv.slice(2);
const dirs = readdirSync(join(root, 'packages')).sort();
const unknown = wanted.filter((w) => !dirs.some((d) => w === d || w === `@loom/${d}`));
if (unknown.length > 0) {
  console.error(`readme-examples: no package ${unknown.join(', ')}; packages: ${dirs.join(' ')}`);
  process.exit(2);
}

let failed = 0;
let passed = 0;
for (const dir of dirs) {
  if (wanted.length > 0 && !wanted.some((w) => w === dir || w === `@loom/${dir}`)) continue;
  const readme = `packages/${dir}/README.md`;
  const manifest = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
  const example = extractExample(readFileSync(join(root, readme), 'utf8'));
  if ('missing' in example) {
    if (manifest.private) {
      console.log(`- ${readme}: skipped (private package; ${example.missing})`);
      continue;
    }
    fail(readme, `${example.missing}; every public package's README needs a runnable example`);
    continue;
  }
  const error = runExample(dir, example.code, example.startLine);
  if (error) fail(readme, error);
  else {
    passed++;
    console.log(`✓ ${readme}`);
  }
}
console.log(`readme-examples: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

/**
 * @param {string} readme
 * @param {string} message
 */
function fail(readme, message) {
  failed++;
  console.log(`✗ ${readme}: ${message}`);
}

/**
 * Runs one example; returns what went wrong, or null.
 * @param {string} dir
 * @param {string} code
 * @param {number} startLine README line of the code's first line
 * @returns {string | null}
 */
function runExample(dir, code, startLine) {
  /** @type {import('./lib/readme-example.mjs').ShownOutput[]} */
  let shown;
  try {
    shown = shownOutput(code).map((s) => ({ ...s, line: s.line + startLine - 1 }));
  } catch (e) {
    return `cannot read the shown output: ${e instanceof Error ? e.message : e}`;
  }
  if (shown.length === 0)
    return 'the example shows no output (a `// ` comment on a console.log line) to check';
  const file = join(root, 'scripts', `.readme-example-${dir}-${process.pid}.ts`);
  writeFileSync(file, `${code}\n`);
  try {
    const run = spawnSync(process.execPath, ['--conditions=@loom/source', '--import', 'tsx', file], {
      cwd: root,
      encoding: 'utf8',
      timeout: TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error) return `could not run: ${run.error.message}`;
    if (run.status !== 0) {
      const why = run.signal ? `was killed by ${run.signal}` : `exited with ${run.status}`;
      return `the example ${why}:\n${indent(run.stderr || run.stdout)}`;
    }
    const mismatch = compareOutput(shown, run.stdout);
    return mismatch && `${mismatch}; it printed:\n${indent(run.stdout)}`;
  } finally {
    rmSync(file, { force: true });
  }
}

/** @param {string} text */
function indent(text) {
  const lines = text.trimEnd().split('\n');
  const tail = lines.length > 40 ? ['…', ...lines.slice(-40)] : lines;
  return tail.map((l) => `    ${l}`).join('\n');
}
