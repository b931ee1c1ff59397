import { defineConfig } from 'vitest/config';

/** Shared vitest settings: resolve workspace packages to their TypeScript sources, so tests need no build. */
export const loomVitest = defineConfig({
  ssr: { resolve: { conditions: ['@loom/source'] } },
  resolve: { conditions: ['@loom/source'] },
  test: { testTimeout: 120_000, hookTimeout: 120_000, pool: 'forks' },
});
