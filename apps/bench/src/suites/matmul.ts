import { CpuBackend } from '@loom/backend-cpu';
import { type Backend, matmul, randn, type Shape, setBackend, type Tensor } from '@loom/tensor';
import { requireNodeWebGPU } from '@loom/webgpu-node';
import { timeMedian } from '../stats';
import type { Row, Suite, SuiteResult } from '../suite';

/** One product to time: operand shapes as stored, and the transpose flags. */
interface Case {
  readonly group: string;
  readonly a: Shape;
  readonly b: Shape;
  readonly transA?: boolean;
  readonly transB?: boolean;
}

/** A way to run the products: a backend plus the kernel settings it needs. */
interface Variant {
  readonly column: string;
  readonly backend: Backend;
  readonly setup: () => Promise<void>;
  /** Waits for queued work (WebGPU) by reading the given output. */
  readonly sync: (out: Tensor) => Promise<void>;
}

const squares = [64, 128, 256, 512, 1024].map((s): Case => ({ group: 'square', a: [s, s], b: [s, s] }));

/** stories15M (dim 288, hidden 768, vocab 32000): weights are stored [out, in], hence transB; batch decode has one row per sequence. */
const decode: Case[] = [
  { group: 'decode', a: [1, 288], b: [288, 768] },
  { group: 'decode', a: [1, 288], b: [768, 288], transB: true },
  { group: 'decode', a: [1, 768], b: [288, 768], transB: true },
  { group: 'decode', a: [1, 288], b: [288, 32000] },
  { group: 'decode', a: [1, 288], b: [32000, 288], transB: true },
  { group: 'batch decode', a: [2, 288], b: [32000, 288], transB: true },
  { group: 'batch decode', a: [8, 288], b: [32000, 288], transB: true },
  { group: 'batch decode', a: [16, 288], b: [32000, 288], transB: true },
  { group: 'batch decode', a: [8, 288], b: [768, 288], transB: true },
  { group: 'batch decode', a: [8, 768], b: [288, 768], transB: true },
  { group: 'prefill', a: [768, 288], b: [288, 768] },
  { group: 'prefill', a: [768, 288], b: [768, 288], transB: true },
];

/** A prefill of 128 tokens in the stories110M shape (dim 768, hidden 2048): the few-row kernel's largest products. */
const prefill110M: Case[] = [
  { group: 'prefill 128, 110M', a: [128, 768], b: [768, 768], transB: true },
  { group: 'prefill 128, 110M', a: [128, 768], b: [2048, 768], transB: true },
  { group: 'prefill 128, 110M', a: [128, 2048], b: [768, 2048], transB: true },
];

/** One step of the 4-layer dim-128 GPT (batch 12 x block 64 = 768 rows, 4 heads of 32, 65 characters). */
const training: Case[] = [
  { group: 'train qkv', a: [768, 128], b: [384, 128], transB: true },
  { group: 'train mlp up', a: [768, 128], b: [512, 128], transB: true },
  { group: 'train mlp down', a: [768, 512], b: [128, 512], transB: true },
  { group: 'train head', a: [768, 128], b: [65, 128], transB: true },
  { group: 'train dX', a: [768, 512], b: [512, 128] },
  { group: 'train dW', a: [768, 512], b: [768, 128], transA: true },
  { group: 'train scores', a: [48, 64, 32], b: [48, 64, 32], transB: true },
  { group: 'train att·v', a: [48, 64, 64], b: [48, 64, 32] },
];

const CASES: readonly Case[] = [...squares, ...decode, ...prefill110M, ...training];

/** Each timed run repeats the product until it lasts about this long. */
const RUN_MS = 25;
const RUNS = 5;

function flops(c: Case): number {
  const [m, k] = c.transA ? [c.a[c.a.length - 1], c.a[c.a.length - 2]] : c.a.slice(-2);
  const n = c.transB ? c.b[c.b.length - 2] : c.b[c.b.length - 1];
  const batch = c.a.slice(0, -2).reduce((x, y) => x * y, 1);
  return 2 * batch * m * n * k;
}

function label(c: Case): string {
  const show = (s: Shape, t: boolean | undefined) => `[${s.join(',')}]${t ? 'ᵀ' : ''}`;
  return `${show(c.a, c.transA)}x${show(c.b, c.transB)}`;
}

/** Median GFLOP/s of `c` on a variant: warm-up, calibrate repetitions, then timed runs. */
async function measure(c: Case, variant: Variant): Promise<number> {
  setBackend(variant.backend);
  const a = randn(c.a, { seed: 1 });
  const b = randn(c.b, { seed: 2 });
  const options = { transA: c.transA ?? false, transB: c.transB ?? false };
  const products = async (count: number) => {
    let last = matmul(a, b, options);
    for (let i = 1; i < count; i++) {
      last.dispose();
      last = matmul(a, b, options);
    }
    await variant.sync(last);
    last.dispose();
  };
  const once = await timeMedian(() => products(1), 3, 2);
  const count = Math.max(1, Math.min(10_000, Math.ceil(RUN_MS / Math.max(once, 1e-3))));
  const ms = (await timeMedian(() => products(count), RUNS, 1)) / count;
  a.dispose();
  b.dispose();
  return flops(c) / ms / 1e6;
}

async function cpuVariants(): Promise<Variant[]> {
  const sync = async () => {};
  const setup = async () => {};
  const variants: Variant[] = [
    { column: 'js', backend: new CpuBackend({ wasm: false, threads: 1 }), sync, setup },
    { column: 'wasm 1t', backend: new CpuBackend({ wasm: true, threads: 1 }), sync, setup },
  ];
  const threaded = new CpuBackend({ wasm: true });
  const { threads } = threaded.kernelSettings;
  if (threads > 1) {
    variants.push({
      column: `wasm ${threads}t`,
      backend: threaded,
      sync,
      setup: async () => {
        const ready = await threaded.threadsReady();
        if (ready !== threads) throw new Error(`bench matmul: only ${ready} of ${threads} threads started`);
      },
    });
  }
  return variants;
}

async function webgpuVariants(): Promise<Variant[]> {
  const backend = await requireNodeWebGPU();
  return [
    {
      column: 'webgpu',
      backend,
      setup: async () => {},
      sync: async (out) => {
        backend.flush();
        await out.data();
      },
    },
  ];
}

export const matmulSuite: Suite = {
  name: 'matmul',
  description: 'GFLOP/s of matrix products: squares 64-1024, decode and training shapes',
  flags: {},
  usage: '',
  async run({ backend }): Promise<SuiteResult> {
    const variants = backend === 'cpu' ? await cpuVariants() : await webgpuVariants();
    const results = new Map<string, number>();
    // Variants take turns on each shape, so a burst of load from other processes hits them alike.
    for (const c of CASES) {
      for (const variant of variants) {
        await variant.setup();
        results.set(`${variant.column} ${label(c)}`, await measure(c, variant));
      }
    }
    const rows: Row[] = CASES.map((c) => {
      const row: Record<string, string | number> = { group: c.group, shape: label(c) };
      for (const v of variants) row[`${v.column} GFLOP/s`] = results.get(`${v.column} ${label(c)}`) ?? 0;
      return row;
    });
    return {
      title: `matmul on ${backend}: GFLOP/s, median of ${RUNS} runs of about ${RUN_MS} ms after warm-up`,
      rows,
      notes: [
        'decode rows (m = 1) are memory-bound: GB/s of weights read = 2 x GFLOP/s.',
        ...(backend === 'cpu'
          ? ['js: portable JavaScript kernel; wasm: WebAssembly SIMD kernel, on 1 or more threads.']
          : []),
      ],
    };
  },
};
