import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import type { TransformerLM } from '@loom/nn';
import { type Backend, setBackend } from '@loom/tensor';
import { type FlagValues, integerFlag, stringFlag, UsageError } from '../flags';
import { sharedDataFile } from '../shared-data';
import { median } from '../stats';
import type { Row, SuiteResult } from '../suite';
import { decodeRate, shapedModel } from './bench-model';
import { openBenchBrowser } from './chromium-page';
import type { BenchModel, BrowserBackend } from './protocol';

/** `--browser-backend`: the browser's CPU path, WebGPU on the machine's adapter, or WebGPU on SwiftShader. */
const BROWSER_BACKENDS = ['cpu', 'webgpu', 'webgpu-swiftshader'] as const;
type BrowserBackendFlag = (typeof BROWSER_BACKENDS)[number];

/** Untimed decode steps before each timed run. */
const WARM_UP_STEPS = 16;
/** The goal: the browser decodes at least this fraction of Node's tokens/s. */
const GOAL = 0.7;

interface Target {
  readonly name: string;
  /** The weights file the page fetches, if any. */
  readonly file?: string;
  /** The model as the page's worker builds it. */
  readonly page: BenchModel;
  /** The same model in this process. */
  readonly node: () => TransformerLM;
}

function targets(notes: string[]): Target[] {
  const stories = sharedDataFile('models/stories260K.bin');
  const small: Target =
    stories === undefined
      ? {
          name: 'stories260K shape',
          page: { kind: 'shape', name: 'stories260K' },
          node: () => shapedModel('stories260K'),
        }
      : {
          name: 'stories260K',
          file: stories,
          page: { kind: 'file', name: 'stories260K.bin', url: '/model/stories260K.bin' },
          node: () => transformerFromTensors(loadModelFile(stories), stories).eval(),
        };
  if (stories === undefined)
    notes.push('stories260K.bin is not in ../shared/data/models: random weights of its shape.');
  return [
    small,
    {
      name: 'stories15M shape',
      page: { kind: 'shape', name: 'stories15M' },
      node: () => shapedModel('stories15M'),
    },
  ];
}

function browserBackendFlag(values: FlagValues): BrowserBackendFlag {
  const value = stringFlag(values, 'browser-backend') ?? 'cpu';
  const known = BROWSER_BACKENDS.find((name) => name === value);
  if (known === undefined) {
    throw new UsageError(
      `--browser-backend: expected one of ${BROWSER_BACKENDS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return known;
}

/** This process's side: the CPU backend on `threads` threads, or WebGPU through Dawn's Node binding. */
async function nodeBackend(
  name: 'cpu' | 'webgpu',
  threads: number,
): Promise<{ backend: Backend; threads: number }> {
  if (name === 'webgpu') {
    const { requireNodeWebGPU } = await import('@loom/webgpu-node');
    return { backend: await requireNodeWebGPU(), threads: 1 };
  }
  const cpu = new CpuBackend({ threads });
  return { backend: cpu, threads: await cpu.threadsReady() };
}

/**
 * `pnpm bench generate --browser`: decode tokens/s of stories260K and of a stories15M-shape model in headless
 * Chromium (a cross-origin isolated page's model worker, the CPU backend on Web Workers, or WebGPU with
 * `--browser-backend`) and in this process on `--backend`, interleaved round by round, with their ratio.
 */
export async function browserGenerate(
  values: FlagValues,
  nodeBackendName: 'cpu' | 'webgpu',
): Promise<SuiteResult> {
  const browserFlag = browserBackendFlag(values);
  const browserBackend: BrowserBackend = browserFlag === 'cpu' ? 'cpu' : 'webgpu';
  const threads = integerFlag(values, 'threads', 1) ?? new CpuBackend().kernelSettings.threads;
  const rounds = integerFlag(values, 'rounds', 1) ?? 3;
  const tokens = integerFlag(values, 'tokens', 1);
  const node = await nodeBackend(nodeBackendName, threads);
  setBackend(node.backend);
  const nodeThreads = node.threads;
  const notes: string[] = [];
  const list = targets(notes);
  const browser = await openBenchBrowser({
    modelFiles: list.flatMap((t) => (t.file === undefined ? [] : [t.file])),
    swiftShader: browserFlag !== 'webgpu',
  });
  const rows: Row[] = [];
  let pageThreads = 1;
  let adapter = '';
  try {
    if (!(await browser.crossOriginIsolated()))
      throw new Error('the bench page is not cross-origin isolated');
    const setup = await browser.request({ kind: 'setup', backend: browserBackend, threads });
    if (setup.kind !== 'setup') throw new Error(`the browser answered the setup with ${setup.kind}`);
    pageThreads = setup.threads;
    adapter = setup.adapter;
    for (const target of list) {
      const model = target.node();
      const steps = tokens ?? Math.min(255, model.config.maxSeqLen - 1);
      if (steps > model.config.maxSeqLen) {
        throw new UsageError(`--tokens ${steps}: ${target.name} has ${model.config.maxSeqLen} positions`);
      }
      const here: number[] = [];
      const page: number[] = [];
      // N B N B: each round decodes in Node, then in the browser, in the same window.
      for (let round = 0; round < rounds; round++) {
        here.push((await decodeRate(model, steps, WARM_UP_STEPS)).tokensPerS);
        const reply = await browser.request({
          kind: 'decode',
          model: target.page,
          steps,
          warmUp: WARM_UP_STEPS,
        });
        if (reply.kind !== 'decode') throw new Error(`the browser answered a decode with ${reply.kind}`);
        page.push(reply.tokensPerS);
      }
      model.dispose();
      rows.push(
        { model: target.name, measure: `Node decode ${steps} tokens (tok/s)`, value: median(here) },
        { model: target.name, measure: `Chromium decode ${steps} tokens (tok/s)`, value: median(page) },
        {
          model: target.name,
          measure: `Chromium / Node decode (x, goal ≥ ${GOAL})`,
          value: median(page) / median(here),
        },
      );
    }
  } finally {
    await browser.close();
  }
  const browserSide =
    browserBackend === 'cpu'
      ? `the CPU backend with ${pageThreads} thread(s) (Web Workers)`
      : `WebGPU on ${adapter}`;
  notes.push(
    `median of ${rounds} interleaved round(s) (Node, then Chromium); Node on ${nodeBackendName} with ${nodeThreads} CPU thread(s); Chromium (headless, cross-origin isolated, a Web Worker) on ${browserSide}.`,
    'greedy decoding with the argmax on the device; the stories15M shape has random weights (different in each).',
  );
  return {
    title: `text generation in Chromium (${browserFlag}) and in Node (${nodeBackendName})`,
    rows,
    notes,
  };
}
