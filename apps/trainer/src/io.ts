/** Somewhere text goes: process.stdout/stderr, or a test's collector. */
export interface TextSink {
  write(text: string): unknown;
  /** A terminal: the progress bar redraws in place. */
  readonly isTTY?: boolean;
  /** Terminal width. */
  readonly columns?: number;
}

/** Where a run writes: the sample to stdout, progress and messages to stderr. */
export interface TrainIO {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
}
