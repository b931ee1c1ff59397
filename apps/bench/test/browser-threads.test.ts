import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium } from '../../chat/test/chromium';
import { productOperands } from '../src/browser/bench-model';
import { type BenchBrowser, openBenchBrowser } from '../src/browser/chromium-page';
import type { BenchModel, BenchReply } from '../src/browser/protocol';

const browserPresent = haveChromium('the browser CPU threads test');
/** A stories15M-shape model: its products (the 288 x 32000 classifier) are long enough to be split across threads. */
const MODEL: BenchModel = { kind: 'shape', name: 'stories15M' };
const STEPS = 8;

function computed(reply: BenchReply) {
  if (reply.kind !== 'compute') throw new Error(`expected a compute reply, got ${reply.kind}`);
  return reply;
}

/** A [m, k] x [k, n] product in float64, the reference the browser's float32 product is checked against. */
function referenceProduct(): Float64Array {
  const { m, k, n, a, b } = productOperands();
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) out[i * n + j] += a[i * k + p] * b[p * n + j];
  return out;
}

describe.skipIf(!browserPresent)('the CPU backend in headless Chromium', () => {
  let isolated: BenchBrowser;

  beforeAll(async () => {
    isolated = await openBenchBrowser();
  });
  afterAll(async () => {
    await isolated?.close();
  });

  it('runs on 2 Web Workers in a cross-origin isolated page, bit-identical to 1 thread', async () => {
    expect(await isolated.crossOriginIsolated()).toBe(true);
    expect(await isolated.request({ kind: 'setup', backend: 'cpu', threads: 1 })).toMatchObject({
      threads: 1,
    });
    const one = computed(await isolated.request({ kind: 'compute', model: MODEL, steps: STEPS }));
    expect(await isolated.request({ kind: 'setup', backend: 'cpu', threads: 2 })).toMatchObject({
      threads: 2,
    });
    const two = computed(await isolated.request({ kind: 'compute', model: MODEL, steps: STEPS }));

    const product = new Float32Array(Uint32Array.from(two.product).buffer);
    const reference = referenceProduct();
    expect(product.length).toBe(reference.length);
    let worst = 0;
    for (let i = 0; i < reference.length; i++) worst = Math.max(worst, Math.abs(product[i] - reference[i]));
    expect(worst).toBeLessThan(1e-3);

    expect(two.product).toEqual(one.product);
    expect(two.tokens).toHaveLength(STEPS);
    expect(two.tokens).toEqual(one.tokens);
    expect(two.logits).toHaveLength(32000);
    expect(two.logits).toEqual(one.logits);
  });

  it("uses one thread on the page's main thread, which may not block", async () => {
    expect(await isolated.mainThreadThreads()).toBe(1);
  });

  it('uses one thread when the page is not cross-origin isolated', async () => {
    const plain = await openBenchBrowser({ isolated: false });
    try {
      expect(await plain.crossOriginIsolated()).toBe(false);
      expect(await plain.request({ kind: 'setup', backend: 'cpu', threads: 2 })).toMatchObject({
        threads: 1,
      });
    } finally {
      await plain.close();
    }
  });
});
