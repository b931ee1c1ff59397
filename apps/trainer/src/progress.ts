import { formatCount, formatDuration, formatLoss } from './format';
import type { TextSink } from './io';

/** What the bar shows after a step. */
export interface StepStatus {
  /** Steps completed. */
  readonly step: number;
  readonly loss: number;
  readonly lr: number;
  readonly ms: number;
  readonly tokensPerSec: number;
}

const BAR_WIDTH = 20;
/** Weight of the newest step in the smoothed ms/iteration behind the ETA. */
const SMOOTHING = 0.1;

/**
 * The training progress line on stderr: on a terminal it redraws in place after every step;
 * elsewhere (a log file, CI) it prints a plain line every few steps so the output stays short.
 */
export class Progress {
  readonly #every: number;
  #smoothedMs: number | undefined;
  #drawn = false;

  constructor(
    private readonly sink: TextSink,
    private readonly total: number,
  ) {
    this.#every = Math.max(1, Math.round(total / 40));
  }

  update(s: StepStatus): void {
    this.#smoothedMs =
      this.#smoothedMs === undefined ? s.ms : this.#smoothedMs + SMOOTHING * (s.ms - this.#smoothedMs);
    const line = this.#line(s, this.#smoothedMs);
    if (this.sink.isTTY) {
      const width = this.sink.columns ?? 120;
      this.sink.write(`\r\x1b[2K${line.slice(0, width - 1)}`);
      this.#drawn = true;
    } else if (s.step % this.#every === 0 || s.step === this.total || s.step === 1) {
      this.sink.write(`${line}\n`);
    }
  }

  /** A line that stays (an evaluation, a checkpoint): printed above the bar. */
  note(text: string): void {
    this.#clear();
    this.sink.write(`${text}\n`);
  }

  /** Ends the bar's line. */
  finish(): void {
    if (this.#drawn) this.sink.write('\n');
    this.#drawn = false;
  }

  #clear(): void {
    if (this.#drawn) this.sink.write('\r\x1b[2K');
    this.#drawn = false;
  }

  #line(s: StepStatus, smoothedMs: number): string {
    const done = Math.round((BAR_WIDTH * s.step) / this.total);
    const bar = `[${'#'.repeat(done)}${'.'.repeat(BAR_WIDTH - done)}]`;
    const steps = `${String(s.step).padStart(String(this.total).length)}/${this.total}`;
    const eta = formatDuration((this.total - s.step) * smoothedMs);
    return (
      `step ${steps} ${bar} loss ${formatLoss(s.loss)} | lr ${s.lr.toExponential(2)} | ` +
      `${formatCount(s.tokensPerSec)} tok/s | ${s.ms.toFixed(0)} ms/it | ETA ${eta}`
    );
  }
}
