import { SamplerConfigError } from './config-error';
import { checkStopStrings } from './stop-string-matcher';
import { checkInteger, checkKnownFields, describeValue } from './validate';

/** When a generation stops; every criterion is optional. */
export interface StopConfig {
  /** Stop when one of these tokens is sampled (its text is not emitted). */
  eosTokenIds?: readonly number[];
  /** Stop when the text reaches one of these strings (the string itself is not emitted). */
  stopStrings?: readonly string[];
  /** Stop after this many new tokens, an integer ≥ 1; default: no limit. */
  maxNewTokens?: number;
  /** Stop when the same token comes this many times in a row, an integer ≥ 2; default: never. */
  repeatLimit?: number;
}

/** A validated `StopConfig`; absent limits are Infinity. */
export interface ResolvedStopConfig {
  readonly eosTokenIds: ReadonlySet<number>;
  readonly stopStrings: readonly string[];
  readonly maxNewTokens: number;
  readonly repeatLimit: number;
}

const STOP_CONFIG_FIELDS: readonly (keyof StopConfig)[] = [
  'eosTokenIds',
  'stopStrings',
  'maxNewTokens',
  'repeatLimit',
];

const UNLIMITED = Number.POSITIVE_INFINITY;

function checkEosTokenIds(ids: unknown): Set<number> {
  if (!Array.isArray(ids)) {
    throw new SamplerConfigError(
      'eosTokenIds',
      `eosTokenIds must be an array of token ids, got ${describeValue(ids)}`,
    );
  }
  return new Set(
    ids.map((id: unknown, i) => checkInteger(`eosTokenIds[${i}]`, id, { min: 0, max: UNLIMITED })),
  );
}

/** Validates a stop config (a `SamplerConfigError` names the first bad field) and fills in defaults. */
export function resolveStopConfig(config: StopConfig = {}): ResolvedStopConfig {
  checkKnownFields('StopConfig', config, STOP_CONFIG_FIELDS);
  return {
    eosTokenIds: checkEosTokenIds(config.eosTokenIds ?? []),
    stopStrings: checkStopStrings(config.stopStrings ?? []),
    maxNewTokens:
      config.maxNewTokens === undefined
        ? UNLIMITED
        : checkInteger(
            'maxNewTokens',
            config.maxNewTokens,
            { min: 1, max: UNLIMITED },
            'omit it for no limit',
          ),
    repeatLimit:
      config.repeatLimit === undefined
        ? UNLIMITED
        : checkInteger(
            'repeatLimit',
            config.repeatLimit,
            { min: 2, max: UNLIMITED },
            'omit it to never stop',
          ),
  };
}
