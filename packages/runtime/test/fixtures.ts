import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '@loom/backend-cpu';
import { type LoadedModel, loadModelFile, transformerFromTensors } from '@loom/models';
import type { TransformerLM } from '@loom/nn';
import { type Backend, scope, setBackend, tensor } from '@loom/tensor';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import { webgpuForTests } from '@loom/webgpu-node';
import { afterAll, beforeAll, describe } from 'vitest';
import { type ChatEvent, type GenerationStats, TextGenerator } from '../src/index';

/** The shared data folder, `../shared/data` beside the repository. */
export const dataDir = fileURLToPath(new URL('../../../../shared/data/', import.meta.url));
export const modelPath = `${dataDir}models/stories260K.bin`;
export const tokenizerPath = `${dataDir}models/tok512.bin`;

export interface GoldenGreedy {
  prompt: string;
  steps: number;
  text: string;
  prompt_tokens: number[];
  sequence: number[];
}

export interface Golden {
  greedy: GoldenGreedy[];
  logits: { text: string; tokens: number[]; logits: number[][] }[];
}

export const golden: Golden = JSON.parse(readFileSync(`${dataDir}golden/stories260K.json`, 'utf8'));

let weights: LoadedModel | undefined;
let tokenizer: Tokenizer | undefined;

/** tok512, read once per test file. */
export function tok512(): Tokenizer {
  tokenizer ??= loadTokenizer(readFileSync(tokenizerPath), tokenizerPath);
  return tokenizer;
}

/** stories260K and tok512, read once per test file. */
export function stories(backend: Backend): TextGenerator {
  weights ??= loadModelFile(modelPath);
  setBackend(backend);
  return new TextGenerator(transformerFromTensors(weights, modelPath), tok512());
}

/**
 * Collects garbage until `done()` holds (finalisers run after a collection, on a later turn of the event loop), at
 * most 50 rounds; needs node --expose-gc, which vitest.config.ts passes.
 */
export async function collectGarbageUntil(done: () => boolean): Promise<void> {
  if (!gc) throw new Error('run the tests with node --expose-gc (vitest.config.ts passes it)');
  for (let round = 0; round < 50 && !done(); round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Collects garbage until the live count of `backend` stays the same for 5 rounds: earlier tests' garbage is freed. */
export async function settleGarbage(backend: Backend): Promise<void> {
  let last = backend.liveCount();
  let steady = 0;
  await collectGarbageUntil(() => {
    const now = backend.liveCount();
    steady = now === last ? steady + 1 : 0;
    last = now;
    return steady >= 5;
  });
}

export type BackendName = 'cpu' | 'webgpu';
export const backendNames: readonly BackendName[] = ['cpu', 'webgpu'];

const cpu = new CpuBackend();

/** The backend of that name, or undefined when WebGPU has no adapter here (the tests then skip). */
export async function backendNamed(name: BackendName): Promise<Backend | undefined> {
  return name === 'cpu' ? cpu : webgpuForTests();
}

/** Each backend by name, undefined where it is unavailable here. */
export const backends = await Promise.all(
  backendNames.map(async (name) => [name, await backendNamed(name)] as const),
);

/** What the tests of one backend's block read: the backend and stories260K on it (set before the tests run). */
export interface StoriesSuite {
  readonly name: BackendName;
  readonly device: Backend;
  readonly generator: TextGenerator;
}

/**
 * One describe block per backend, titled `title(name)` and skipped where the backend is unavailable. `body`
 * registers the tests; the suite it gets holds stories260K on that backend, loaded before the block's tests and
 * disposed after them.
 */
export function describeEachBackend(
  title: (name: BackendName) => string,
  body: (suite: StoriesSuite) => void,
): void {
  for (const [name, backend] of backends) {
    describe.skipIf(!backend)(title(name), () => {
      let generator: TextGenerator | undefined;
      beforeAll(() => {
        generator = stories(backend as Backend);
      });
      afterAll(() => generator?.model.dispose());
      body({
        name,
        device: backend as Backend,
        get generator(): TextGenerator {
          if (generator === undefined) throw new Error("the suite's generator is read before its tests run");
          return generator;
        },
      });
    });
  }
}

/** Every event of a stream (a generation's or a chat turn's), and the summary of its `done` event. */
export async function collect<E extends ChatEvent>(
  events: AsyncIterable<E>,
): Promise<{ events: E[]; stats: GenerationStats }> {
  const all: E[] = [];
  for await (const event of events) all.push(event);
  const last = all[all.length - 1];
  if (last?.type !== 'done') throw new Error('the stream ended without a done event');
  return { events: all, stats: last.stats };
}

/** The logits after the last of `tokens`, recomputed by a full forward pass without a cache. */
export async function recomputed(model: TransformerLM, tokens: readonly number[]): Promise<Float32Array> {
  const { vocabSize } = model.config;
  const row = scope(() =>
    model
      .forward(tensor(Int32Array.from(tokens), [1, tokens.length], { backend: model.backend }))
      .slice([0, tokens.length - 1, 0], [1, 1, vocabSize]),
  );
  const values = await row.data();
  row.dispose();
  if (!(values instanceof Float32Array)) throw new Error('expected float32 logits');
  return values;
}

/** Largest absolute difference of two rows. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`rows of ${a.length} and ${b.length} values`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}
