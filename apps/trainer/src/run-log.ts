import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '@loom/models';

export interface StartRecord {
  readonly type: 'start';
  readonly time: string;
  /** Steps already done (non-zero when resumed). */
  readonly step: number;
  readonly resumedFrom: string | null;
  readonly args: readonly string[];
  readonly backend: string;
  readonly parameters: number;
  readonly vocabSize: number;
  readonly trainTokens: number;
  readonly valTokens: number;
}

export interface StepRecord {
  readonly type: 'step';
  /** Steps completed, this one included. */
  readonly step: number;
  readonly loss: number;
  readonly lr: number;
  readonly gradNorm: number;
  readonly ms: number;
  readonly tokensPerSec: number;
  /** The update was dropped (non-finite loss or gradient with --on-nonfinite skip). */
  readonly skipped: boolean;
}

export interface EvalRecord {
  readonly type: 'eval';
  readonly step: number;
  readonly trainLoss: number;
  readonly valLoss: number;
  /** Share of right predictions, for objectives that have one (masked tokens, classes). */
  readonly trainAccuracy?: number;
  readonly valAccuracy?: number;
}

export type EndReason = 'finished' | 'interrupted' | 'nonfinite';

export interface EndRecord {
  readonly type: 'end';
  readonly step: number;
  readonly reason: EndReason;
  readonly elapsedMs: number;
}

export type LogRecord = StartRecord | StepRecord | EvalRecord | EndRecord;

/** What the loss curve is drawn from. */
export interface LossHistory {
  readonly steps: readonly { readonly step: number; readonly loss: number }[];
  readonly evals: readonly { readonly step: number; readonly trainLoss: number; readonly valLoss: number }[];
}

/** JSON text of a record; NaN and infinities are written as the strings "NaN", "Infinity", "-Infinity". */
function recordLine(record: LogRecord): string {
  return JSON.stringify(record, (_key, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
  );
}

function field(object: object, key: string): unknown {
  return Object.entries(object).find(([k]) => k === key)?.[1];
}

/** A logged number: a JSON number or one of the strings recordLine writes for non-finite values. */
function loggedNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
  return undefined;
}

/**
 * The run's JSON-lines log (`train-log.jsonl`), one record per line. A resumed run keeps the
 * records up to the step it resumes from and drops any written after that checkpoint, so the
 * log reads as one uninterrupted run.
 */
export class RunLog {
  readonly #path: string;
  readonly #steps: { step: number; loss: number }[] = [];
  readonly #evals: { step: number; trainLoss: number; valLoss: number }[] = [];

  /**
   * Starts a new log at `path`; when `previous` is given (a resumed run), first copies the
   * records of the log there up to `previous.step`.
   */
  constructor(path: string, previous?: { readonly path: string; readonly step: number }) {
    this.#path = path;
    const kept: string[] = [];
    if (previous !== undefined && existsSync(previous.path)) {
      for (const line of readFileSync(previous.path, 'utf8').split('\n')) {
        const parsed = parseLine(line);
        if (parsed === undefined || parsed.step > previous.step) continue;
        kept.push(line);
        this.#remember(parsed.object);
      }
    }
    writeFileAtomic(path, new TextEncoder().encode(kept.map((l) => `${l}\n`).join('')));
  }

  append(record: LogRecord): void {
    appendFileSync(this.#path, `${recordLine(record)}\n`);
    this.#remember(record);
  }

  get history(): LossHistory {
    return { steps: this.#steps, evals: this.#evals };
  }

  #remember(record: object): void {
    const type = field(record, 'type');
    const step = loggedNumber(field(record, 'step'));
    if (step === undefined) return;
    if (type === 'step') {
      const loss = loggedNumber(field(record, 'loss'));
      if (loss !== undefined) this.#steps.push({ step, loss });
    } else if (type === 'eval') {
      const trainLoss = loggedNumber(field(record, 'trainLoss'));
      const valLoss = loggedNumber(field(record, 'valLoss'));
      if (trainLoss !== undefined && valLoss !== undefined) this.#evals.push({ step, trainLoss, valLoss });
    }
  }
}

/** A log line's record and step, or undefined for a blank or unreadable line (a torn last line). */
function parseLine(line: string): { object: object; step: number } | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const step = loggedNumber(field(value, 'step'));
  return step === undefined ? undefined : { object: value, step };
}
