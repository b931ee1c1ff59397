import type { Module } from '@loom/nn';

/** Number of weights a module holds (every parameter's element count). */
export function parameterTotal(module: Module): number {
  return module.parameters().reduce((sum, p) => sum + p.size, 0);
}
