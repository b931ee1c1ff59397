/** The compute backend the page's worker runs on: the CPU backend, or WebGPU on the adapter Chromium gives. */
export type BrowserBackend = 'cpu' | 'webgpu';

/** A model of the benchmark: its weights fetched from the page's server, or random of a known shape. */
export type BenchModel =
  | { readonly kind: 'file'; readonly name: string; readonly url: string }
  | { readonly kind: 'shape'; readonly name: 'stories260K' | 'stories15M' };

/** What the page's worker is asked to do. */
export type BenchRequest =
  /** Sets the backend and the CPU thread count; answered with the threads a large product uses. */
  | { readonly kind: 'setup'; readonly backend: BrowserBackend; readonly threads: number }
  /** Decodes `steps` greedy tokens from one start token after `warmUp` untimed ones. */
  | { readonly kind: 'decode'; readonly model: BenchModel; readonly steps: number; readonly warmUp: number }
  /** A seeded product and a greedy generation, to compare between thread counts. */
  | { readonly kind: 'compute'; readonly model: BenchModel; readonly steps: number };

/** The answers, in the order of BenchRequest. */
export type BenchReply =
  | { readonly kind: 'setup'; readonly threads: number; readonly adapter: string }
  | { readonly kind: 'decode'; readonly tokensPerS: number; readonly tokens: readonly number[] }
  | {
      readonly kind: 'compute';
      /** The product's float32 bits. */
      readonly product: readonly number[];
      readonly tokens: readonly number[];
      /** The float32 bits of the last step's logits. */
      readonly logits: readonly number[];
    }
  | { readonly kind: 'error'; readonly message: string };

/** What the page exposes to the driver (page.evaluate). */
export interface BenchPage {
  /** Sends a request to the page's model worker. */
  request(request: BenchRequest): Promise<BenchReply>;
  /** The threads a large product uses when two are asked for on the page's main thread (which may not block, so 1). */
  mainThreadThreads(): Promise<number>;
  readonly crossOriginIsolated: boolean;
}
