/** Format marker and version of `trainer-state.json`. */
export const TRAINER_STATE_FORMAT = 'loom-trainer-state';
export const TRAINER_STATE_VERSION = 1;

/** Everything besides tensors that a resumed run needs to continue exactly. */
export interface TrainerState {
  /** Steps completed (updated or skipped). */
  readonly step: number;
  /** Updates AdamW applied (its bias correction counts these). */
  readonly optimizerSteps: number;
  readonly skipped: number;
  /** Training forward passes so far: the position of every dropout mask stream. */
  readonly trainingForwards: number;
  readonly bestValLoss: number | null;
  readonly elapsedMs: number;
  /** The run's options as flags (see optionsToArgs), read back with the same parser. */
  readonly args: readonly string[];
  readonly data: {
    readonly source: string;
    readonly sha256: string;
    readonly trainTokens: number;
    readonly valTokens: number;
  };
}

export function trainerStateJson(state: TrainerState): string {
  return `${JSON.stringify({ format: TRAINER_STATE_FORMAT, version: TRAINER_STATE_VERSION, ...state }, null, 2)}\n`;
}

class Reader {
  constructor(
    private readonly source: string,
    private readonly json: object,
    private readonly prefix = '',
  ) {}

  #get(key: string): unknown {
    return Object.entries(this.json).find(([k]) => k === key)?.[1];
  }

  #fail(key: string, expected: string): never {
    const value = JSON.stringify(this.#get(key)) ?? 'nothing';
    throw new Error(`${this.source}: "${this.prefix}${key}" should be ${expected}, got ${value}`);
  }

  count(key: string): number {
    const v = this.#get(key);
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : this.#fail(key, 'an integer >= 0');
  }

  number(key: string): number {
    const v = this.#get(key);
    return typeof v === 'number' && Number.isFinite(v) ? v : this.#fail(key, 'a number');
  }

  numberOrNull(key: string): number | null {
    return this.#get(key) === null ? null : this.number(key);
  }

  string(key: string): string {
    const v = this.#get(key);
    return typeof v === 'string' ? v : this.#fail(key, 'a string');
  }

  strings(key: string): string[] {
    const v = this.#get(key);
    return Array.isArray(v) && v.every((s: unknown): s is string => typeof s === 'string')
      ? v
      : this.#fail(key, 'a list of strings');
  }

  object(key: string): Reader {
    const v = this.#get(key);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? new Reader(this.source, v, `${this.prefix}${key}.`)
      : this.#fail(key, 'an object');
  }
}

/** Reads `trainer-state.json` text, naming `source` and the offending key in errors. */
export function parseTrainerState(text: string, source: string): TrainerState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${source}: not valid JSON (${reason}); the checkpoint is corrupt`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`${source}: expected a JSON object; the checkpoint is corrupt`);
  }
  const r = new Reader(source, json);
  if (r.string('format') !== TRAINER_STATE_FORMAT) {
    throw new Error(`${source}: "format" should be "${TRAINER_STATE_FORMAT}"; not a Loom trainer state`);
  }
  const version = r.count('version');
  if (version !== TRAINER_STATE_VERSION) {
    throw new Error(`${source}: version ${version}; this trainer reads version ${TRAINER_STATE_VERSION}`);
  }
  const data = r.object('data');
  return {
    step: r.count('step'),
    optimizerSteps: r.count('optimizerSteps'),
    skipped: r.count('skipped'),
    trainingForwards: r.count('trainingForwards'),
    bestValLoss: r.numberOrNull('bestValLoss'),
    elapsedMs: r.number('elapsedMs'),
    args: r.strings('args'),
    data: {
      source: data.string('source'),
      sha256: data.string('sha256'),
      trainTokens: data.count('trainTokens'),
      valTokens: data.count('valTokens'),
    },
  };
}
