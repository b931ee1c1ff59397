import { defineConfig } from 'tsup';

/**
 * dist/loom.js, the `loom` bin (the shebang of src/loom.ts is kept and the file made executable). The apps it runs
 * (@loom/generate, @loom/trainer, @loom/bench: private, devDependencies) are bundled in, one chunk per command,
 * loaded when that command runs; the published libraries (dependencies) stay imports of their packages.
 */
export default defineConfig({
  entry: ['src/loom.ts'],
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  splitting: true,
  sourcemap: true,
  clean: true,
  // The browser benchmark's page builder: loaded only by `loom bench generate --browser`, never bundled.
  external: ['vite', 'playwright-core'],
});
