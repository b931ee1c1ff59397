// @ts-check
// The workspace's public packages (packages/* without "private"), packed the way they are published.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** @typedef {{ dir: string, name: string, version: string }} PublicPackage  dir: the folder under packages/ */

/** @returns {PublicPackage[]} */
export function publicPackages() {
  return readdirSync(join(root, 'packages'))
    .sort()
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')),
    }))
    .filter(({ manifest }) => !manifest.private)
    .map(({ dir, manifest }) => ({ dir, name: manifest.name, version: manifest.version }));
}

/**
 * Runs a command with its output shown; throws naming the command when it fails.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv }} [options]
 */
export function run(command, args, options = {}) {
  try {
    execFileSync(command, args, {
      stdio: 'inherit',
      cwd: options.cwd ?? root,
      env: options.env ?? process.env,
    });
  } catch {
    throw new Error(`\`${[command, ...args].join(' ')}\` failed (in ${options.cwd ?? root})`);
  }
}

/** Builds the packages (turbo, so unchanged ones come from its cache); the apps are not needed. */
export function buildPackages() {
  run('pnpm', ['exec', 'turbo', 'run', 'build', '--filter=./packages/*']);
}

/**
 * `pnpm pack` of every public package into `dest` (workspace:* versions replaced by pnpm).
 * @param {string} dest
 * @returns {(PublicPackage & { tarball: string })[]}
 */
export function packAll(dest) {
  return publicPackages().map((pkg) => {
    const out = execFileSync('pnpm', ['pack', '--json', '--pack-destination', dest], {
      cwd: join(root, 'packages', pkg.dir),
      encoding: 'utf8',
    });
    return { ...pkg, tarball: JSON.parse(out).filename };
  });
}
