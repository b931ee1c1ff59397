import { Worker } from 'node:worker_threads';

/** Bytes the probe streams: far more than any last-level cache, so every pass reads memory. */
const BUFFER_BYTES = 256 * 2 ** 20;
/** Reads of the whole buffer per measurement: ~40 ms at 25 GB/s, so a worker starting late skews it by little. */
const PASSES = 4;
/** Measurements per figure, of which the median is taken. */
const SAMPLES = 5;

/** Unsigned LEB128, as the WebAssembly binary format writes sizes and offsets. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    const low = n & 127;
    n >>>= 7;
    out.push(n === 0 ? low : low | 128);
  } while (n !== 0);
  return out;
}

const section = (id: number, content: readonly number[]): number[] => [
  id,
  ...leb(content.length),
  ...content,
];
const utf8 = (text: string): number[] => [text.length, ...Buffer.from(text)];

/**
 * A module with one function, read(from, to) -> f32: the sum of the f32s in [from, to) of the imported shared memory
 * `m.memory`, in four f32x4 accumulators, 64 bytes a step (to - from a positive multiple of 64). Assembled here
 * rather than by Loom's kernel builder so that the probe shares no code with the kernels it is a ceiling for.
 */
export function readModuleBytes(): Uint8Array<ArrayBuffer> {
  const V128_LOAD = [0xfd, 0x00];
  const F32X4_ADD = [0xfd, 0xe4, 0x01];
  const [LOCAL_GET, LOCAL_SET, LOCAL_TEE] = [0x20, 0x21, 0x22];
  const body: number[] = [1, 4, 0x7b]; // four v128 locals (2-5) after the two i32 parameters
  body.push(0x03, 0x40); // loop
  for (let k = 0; k < 4; k++) {
    // acc_k = acc_k + v128.load(from + 16k)  (memarg: alignment 2^4, offset 16k)
    body.push(
      LOCAL_GET,
      2 + k,
      LOCAL_GET,
      0,
      ...V128_LOAD,
      4,
      ...leb(16 * k),
      ...F32X4_ADD,
      LOCAL_SET,
      2 + k,
    );
  }
  // from += 64; br_if 0 (from < to)
  body.push(LOCAL_GET, 0, 0x41, ...[0xc0, 0x00], 0x6a, LOCAL_TEE, 0, LOCAL_GET, 1, 0x49, 0x0d, 0, 0x0b);
  // f32x4.extract_lane 0 (acc_2 + acc_3 + acc_4 + acc_5)
  body.push(LOCAL_GET, 2, LOCAL_GET, 3, ...F32X4_ADD, LOCAL_GET, 4, ...F32X4_ADD, LOCAL_GET, 5, ...F32X4_ADD);
  body.push(0xfd, 0x1f, 0, 0x0b);
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7d]), // type 0: (i32, i32) -> f32
    ...section(2, [1, ...utf8('m'), ...utf8('memory'), 0x02, 0x03, ...leb(1), ...leb(65536)]), // shared memory
    ...section(3, [1, 0]),
    ...section(7, [1, ...utf8('read'), 0x00, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/** A worker's side: instantiate the module on the shared memory, then time each range it is sent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { read } = new WebAssembly.Instance(workerData.module, { m: { memory: workerData.memory } }).exports;
parentPort.on('message', ({ from, to, passes }) => {
  const start = performance.timeOrigin + performance.now();
  let sum = 0;
  for (let pass = 0; pass < passes; pass++) sum += read(from, to);
  parentPort.postMessage({ start, end: performance.timeOrigin + performance.now(), sum });
});
`;

interface Timing {
  readonly start: number;
  readonly end: number;
}

/**
 * How fast this machine's cores read memory, one thread against several: a ceiling for decode, which streams every
 * weight once per token. Each of `threads` workers reads its share of a 256 MiB buffer (written first, so no page is
 * the shared zero page) in WebAssembly SIMD; the rate is the bytes over the span from the first start to the last
 * end. Measured by the generate suite in the same rounds as Loom's decode, so the two can be compared.
 */
export class MemoryReadProbe {
  readonly #workers: Worker[];

  private constructor(workers: Worker[]) {
    this.#workers = workers;
  }

  /** A probe with `threads` workers, the most a measurement may use. */
  static create(threads: number): MemoryReadProbe {
    const memory = new WebAssembly.Memory({
      initial: BUFFER_BYTES / 65536,
      maximum: BUFFER_BYTES / 65536,
      shared: true,
    });
    new Uint8Array(memory.buffer).fill(1);
    const module = new WebAssembly.Module(readModuleBytes());
    const workers = Array.from(
      { length: threads },
      () => new Worker(WORKER_SOURCE, { eval: true, workerData: { module, memory } }),
    );
    return new MemoryReadProbe(workers);
  }

  /** Median GB/s of SAMPLES measurements reading the buffer PASSES times on `threads` workers at once. */
  async gbPerSecond(threads: number): Promise<number> {
    if (threads > this.#workers.length) {
      throw new RangeError(
        `MemoryReadProbe: ${threads} threads asked of a probe made for ${this.#workers.length}`,
      );
    }
    const share = Math.floor(BUFFER_BYTES / threads / 64) * 64;
    const rates: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const timings = await Promise.all(
        this.#workers.slice(0, threads).map((worker, w) => this.#time(worker, w * share, (w + 1) * share)),
      );
      const span = Math.max(...timings.map((t) => t.end)) - Math.min(...timings.map((t) => t.start));
      rates.push((PASSES * share * threads) / span / 1e6);
    }
    rates.sort((a, b) => a - b);
    return rates[Math.floor(SAMPLES / 2)];
  }

  #time(worker: Worker, from: number, to: number): Promise<Timing> {
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => {
        worker.off('message', done);
        reject(error);
      };
      const done = (timing: Timing) => {
        worker.off('error', failed);
        resolve(timing);
      };
      worker.once('message', done);
      worker.once('error', failed);
      worker.postMessage({ from, to, passes: PASSES });
    });
  }

  /** Ends the workers. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}
