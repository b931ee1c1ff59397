import { defineConfig } from 'vite';
import { ISOLATION_HEADERS } from './src/serve/isolation-headers';

/** The chat page: workspace packages from their TypeScript sources, the model in an ES-module worker. */
export default defineConfig({
  resolve: { conditions: ['@loom/source'] },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  build: { target: 'es2022' },
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
});
