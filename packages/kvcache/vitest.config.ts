import { defineConfig, mergeConfig } from 'vitest/config';
import { loomVitest } from '../../vitest.shared';

/** `--expose-gc`: a test checks that a cache dropped without `dispose()` is freed once collected. */
export default mergeConfig(loomVitest, defineConfig({ test: { execArgv: ['--expose-gc'] } }));
