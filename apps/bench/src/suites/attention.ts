import { CpuBackend } from '@loom/backend-cpu';
import { attention, type Backend, randn, setBackend, type Tensor } from '@loom/tensor';
import { timeMedian } from '../stats';
import type { Row, Suite, SuiteResult } from '../suite';

/** One decode step's attention: one query per head over `keys` cached keys. */
interface Case {
  readonly model: string;
  readonly heads: number;
  readonly headDim: number;
  readonly keys: number;
}

const CASES: readonly Case[] = [
  ...[64, 256].map((keys) => ({ model: 'stories15M', heads: 6, headDim: 48, keys })),
  ...[256, 1024].map((keys) => ({ model: 'stories110M', heads: 12, headDim: 64, keys })),
];

/** Each timed run repeats the call until it lasts about this long. */
const RUN_MS = 20;
const RUNS = 5;

interface Variant {
  readonly column: string;
  readonly backend: CpuBackend;
}

/** Median microseconds of one attention call of `c` on `backend`. */
async function measure(c: Case, backend: Backend): Promise<number> {
  setBackend(backend);
  const q = randn([1, 1, c.heads, c.headDim], { seed: 1 }); // [B, T, H, hd]
  const k = randn([1, c.keys, c.heads, c.headDim], { seed: 2 }); // [B, S, H, hd]
  const v = randn([1, c.keys, c.heads, c.headDim], { seed: 3 });
  const calls = (count: number) => {
    for (let i = 0; i < count; i++) attention(q, k, v).dispose();
  };
  const once = await timeMedian(() => calls(1), 3, 2);
  const count = Math.max(1, Math.min(10_000, Math.ceil(RUN_MS / Math.max(once, 1e-3))));
  const ms = (await timeMedian(() => calls(count), RUNS, 1)) / count;
  for (const t of [q, k, v] as Tensor[]) t.dispose();
  return ms * 1000;
}

export const attentionSuite: Suite = {
  name: 'attention',
  description:
    'microseconds of one decode step of attention (one query over the KV cache) on the CPU kernels',
  flags: {},
  usage: '',
  async run({ backend }): Promise<SuiteResult> {
    if (backend !== 'cpu') throw new Error('bench attention: measures the CPU kernels only (--backend cpu)');
    const variants: Variant[] = [
      { column: 'js', backend: new CpuBackend({ wasm: false, threads: 1 }) },
      { column: 'wasm 1t', backend: new CpuBackend({ threads: 1 }) },
    ];
    const threaded = new CpuBackend();
    const threads = await threaded.threadsReady();
    if (threads > 1) variants.push({ column: `wasm ${threads}t`, backend: threaded });
    const rows: Row[] = [];
    // Variants take turns on each case, so a burst of load from other processes hits them alike.
    for (const c of CASES) {
      const row: Record<string, string | number> = {
        model: c.model,
        shape: `${c.heads} heads of ${c.headDim}, ${c.keys} keys`,
      };
      for (const variant of variants) row[`${variant.column} (us)`] = await measure(c, variant.backend);
      row['js / wasm 1t (x)'] = Number(row['js (us)']) / Number(row['wasm 1t (us)']);
      rows.push(row);
    }
    return {
      title: `decode attention on cpu: microseconds per call, median of ${RUNS} runs of about ${RUN_MS} ms`,
      rows,
      notes: [
        'js: the float64 JavaScript kernel; wasm: the WebAssembly SIMD kernel attend_one_f32, on 1 or more threads.',
      ],
    };
  },
};
