/** A stream text is written to: process.stdout / process.stderr, or a test's collector. */
export type TextSink = NodeJS.WritableStream & {
  /** A terminal: progress bars redraw in place. */
  readonly isTTY?: boolean;
  /** Terminal width. */
  readonly columns?: number;
};

/** What a `loom` command reads and writes: the process's streams and environment, or a test's. */
export interface LoomIo {
  /** Read by `loom chat`; a terminal gets line editing and Ctrl-C handling. */
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  /** INIT_CWD (where pnpm or npx was started) is where relative paths start. */
  readonly env: NodeJS.ProcessEnv;
  /** Aborted by Ctrl-C (SIGINT): a generation stops, a training run checkpoints and stops. */
  readonly signal: AbortSignal;
}

/** Where a command's relative paths start: the directory pnpm or npx was run in, else the current one. */
export function baseDir(env: NodeJS.ProcessEnv): string {
  return env.INIT_CWD ?? process.cwd();
}
