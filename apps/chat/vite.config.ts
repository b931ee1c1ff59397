import { defineConfig } from 'vite';
// By path, not as @loom/server/static-files: Vite bundles a config's relative imports but leaves packages to
// Node, which cannot load TypeScript.
import { ISOLATION_HEADERS } from '../server/src/static-files';

/** The chat page: workspace packages from their TypeScript sources, the model in an ES-module worker. */
export default defineConfig({
  resolve: { conditions: ['@loom/source'] },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  build: { target: 'es2022' },
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
});
