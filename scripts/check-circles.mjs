#!/usr/bin/env node
// @ts-check
// Fails when a package or app imports itself in a circle: every `src` folder under packages/ and apps/ goes
// through madge (type-only imports count too, since a circle of types is still a knot in the design). A circle
// is broken by moving what both modules share into a module of its own.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import madge from 'madge';
import { root } from './lib/packages.mjs';

/**
 * Folders not checked yet, each with the reason; remove an entry once its circles are gone.
 * @type {Map<string, string>}
 */
const SKIPPED = new Map();

const folders = ['packages', 'apps'].flatMap((group) =>
  readdirSync(join(root, group))
    .sort()
    .map((name) => `${group}/${name}`)
    .filter((folder) => existsSync(join(root, folder, 'src')) && !SKIPPED.has(folder)),
);
const result = await madge(
  folders.map((folder) => join(root, folder, 'src')),
  { baseDir: root, fileExtensions: ['ts', 'tsx'], excludeRegExp: [/\.d\.ts$/] },
);
const circles = result.circular();
for (const [folder, reason] of SKIPPED) console.log(`check-circles: skipped ${folder} (${reason})`);
if (circles.length > 0) {
  console.error(`check-circles: ${circles.length} import circle(s):`);
  for (const circle of circles) console.error(`  ${[...circle, circle[0]].join(' > ')}`);
  console.error('Move what the modules of each circle share into a module of its own.');
  process.exit(1);
}
console.log(`check-circles: no import circle in the src of ${folders.length} packages and apps`);
