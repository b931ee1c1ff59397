import type { Backend } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpGroup } from './case';
import { describeFrontEnd } from './front-end';
import { allGroups } from './groups';
import { ReferenceBackend } from './reference/index';
import { runCase } from './run-case';
import { firstMismatch } from './tolerance';

export interface ConformanceOptions {
  /** Only run groups whose op is listed (all by default). */
  readonly only?: readonly string[];
}

function describeGroup(group: OpGroup, getBackend: () => Backend, reference: Backend): void {
  it(group.op, async () => {
    const backend = getBackend();
    for (const [i, c] of group.cases.entries()) {
      const seed = 1 + i;
      const expected = await runCase(reference, c, seed);
      const actual = await runCase(backend, c, seed);
      expect(actual.shape, `${c.name}: shape`).toEqual(expected.shape);
      expect(actual.dtype, `${c.name}: dtype`).toBe(expected.dtype);
      expect(firstMismatch(actual.values, expected.values, c.tol), `${c.name}: values vs the reference`).toBe(
        undefined,
      );
      expect(actual.leakedCount, `${c.name}: live tensors after disposing the result`).toBe(0);
      expect(actual.leakedBytes, `${c.name}: live bytes after disposing the result`).toBe(0);
      if (c.composite) {
        const composite = await runCase(backend, c, seed, 'composite');
        expect(firstMismatch(actual.values, composite.values, c.tol), `${c.name}: fused vs composite`).toBe(
          undefined,
        );
        expect(composite.leakedCount, `${c.name}: live tensors after the composite`).toBe(0);
      }
    }
  });
}

/**
 * Defines the conformance suite for a backend: every op over seeded inputs of many shapes
 * against the independent float64 reference (`./reference`, documented tolerances), each fused kernel against its
 * composite, a leak check after every case, and the front-end's errors and scopes.
 */
export function describeConformance(
  name: string,
  makeBackend: () => Backend | Promise<Backend>,
  options: ConformanceOptions = {},
): void {
  describe(`conformance: ${name}`, () => {
    let backend: Backend | undefined;
    const reference = new ReferenceBackend();
    const getBackend = (): Backend => {
      if (!backend) throw new Error(`conformance: the ${name} backend was not created`);
      return backend;
    };
    beforeAll(async () => {
      backend = await makeBackend();
    });
    for (const group of allGroups) {
      if (!options.only || options.only.includes(group.op)) describeGroup(group, getBackend, reference);
    }
    describeFrontEnd(getBackend);
  });
}
