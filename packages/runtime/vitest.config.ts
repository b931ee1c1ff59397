import { defineConfig, mergeConfig } from 'vitest/config';
import { loomVitest } from '../../vitest.shared';

/** `--expose-gc`: tests check that a stream or chat dropped without being closed frees its cache once collected. */
export default mergeConfig(loomVitest, defineConfig({ test: { execArgv: ['--expose-gc'] } }));
