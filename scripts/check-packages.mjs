#!/usr/bin/env node
// @ts-check
// Builds and packs every public package as it would be published, then checks each tarball:
// - its package.json has the MIT license, the repository folder, engines and exports with types, import
//   and default, and no workspace: versions left; its LICENSE is the repository's;
// - publint (--strict: warnings fail too) and attw with the esm-only profile report no problem. The
//   packages are ES modules only; `default` points at the ESM build so that require() works on Node
//   20.19+ (require(esm)), which attw cannot model yet: its node10 and node16-from-CJS resolutions
//   would flag every ESM-only package, so that profile ignores them. scripts/consumer-test.mjs runs a real
//   CommonJS require instead.
// - .changeset/config.json releases exactly the public packages together (one `fixed` group).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPackages, packAll, publicPackages, root } from './lib/packages.mjs';

const REPOSITORY = 'git+https://github.com/loom-ml/loom.git';
/** @param {string} name */
const bin = (name) => join(root, 'node_modules', '.bin', name);

/**
 * The fields of a published package.json this script reads.
 * @typedef {{
 *   license?: string,
 *   repository?: { type?: string, url?: string, directory?: string },
 *   engines?: { node?: string },
 *   exports?: Record<string, Record<string, unknown>>,
 *   [field: string]: unknown,
 * }} Manifest
 */

/** @type {string[]} */
const problems = [];
checkChangesets();
buildPackages();
const dest = mkdtempSync(join(tmpdir(), 'loom-packs-'));
try {
  const packed = packAll(dest);
  const license = readFileSync(join(root, 'LICENSE'), 'utf8');
  for (const pkg of packed) {
    console.log(`::: ${pkg.name}`);
    const manifest = JSON.parse(fromTarball(pkg.tarball, 'package.json'));
    for (const problem of manifestProblems(manifest, pkg.dir)) problems.push(`${pkg.name}: ${problem}`);
    if (fromTarball(pkg.tarball, 'LICENSE') !== license) {
      problems.push(
        `${pkg.name}: the tarball's LICENSE is not the repository's (copy LICENSE to packages/${pkg.dir})`,
      );
    }
    tool(pkg.name, 'publint', [bin('publint'), 'run', pkg.tarball, '--strict']);
    tool(pkg.name, 'attw', [bin('attw'), pkg.tarball, '--profile', 'esm-only']);
  }
  if (problems.length > 0) {
    console.error(
      `check-packages: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    process.exitCode = 1;
  } else {
    console.log(
      `check-packages: ${packed.length} packages packed; manifests, LICENSE, publint and attw all good`,
    );
  }
} finally {
  rmSync(dest, { recursive: true, force: true });
}

/**
 * A file of a packed tarball (under package/).
 * @param {string} tarball
 * @param {string} path
 */
function fromTarball(tarball, path) {
  try {
    return execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8', stdio: 'pipe' });
  } catch {
    return '';
  }
}

/**
 * What the published package.json lacks.
 * @param {Manifest} m
 * @param {string} dir
 * @returns {string[]}
 */
function manifestProblems(m, dir) {
  const found = [];
  if (m.license !== 'MIT') found.push(`license is ${JSON.stringify(m.license)}, expected "MIT"`);
  const repo = m.repository ?? {};
  if (repo.type !== 'git' || repo.url !== REPOSITORY || repo.directory !== `packages/${dir}`) {
    found.push(`repository must be { type: "git", url: "${REPOSITORY}", directory: "packages/${dir}" }`);
  }
  for (const field of ['homepage', 'keywords', 'sideEffects']) {
    if (m[field] === undefined) found.push(`no "${field}" field`);
  }
  if (m.engines?.node !== '>=20')
    found.push(`engines.node is ${JSON.stringify(m.engines?.node)}, expected ">=20"`);
  const entry = m.exports?.['.'] ?? {};
  for (const condition of ['types', 'import', 'default']) {
    if (typeof entry[condition] !== 'string') found.push(`exports["."] has no "${condition}" condition`);
  }
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(/** @type {Record<string, string>} */ (m[field] ?? {}))) {
      if (String(range).startsWith('workspace:'))
        found.push(`${field}.${name} is still ${range} in the tarball`);
    }
  }
  return found;
}

/**
 * Runs a checker on one tarball; a non-zero exit is a problem (its own output says which).
 * @param {string} name
 * @param {string} label
 * @param {string[]} command
 */
function tool(name, label, [command, ...args]) {
  try {
    execFileSync(command, args, { stdio: 'inherit' });
  } catch {
    problems.push(`${name}: ${label} reported problems (above)`);
  }
}

function checkChangesets() {
  const config = JSON.parse(readFileSync(join(root, '.changeset', 'config.json'), 'utf8'));
  const names = publicPackages()
    .map((p) => p.name)
    .sort();
  const fixed = config.fixed?.length === 1 ? [...config.fixed[0]].sort() : [];
  if (JSON.stringify(fixed) !== JSON.stringify(names)) {
    problems.push(
      `.changeset/config.json: "fixed" must be one group of every public package, ${JSON.stringify(names)}; got ${JSON.stringify(config.fixed)}`,
    );
  }
}
