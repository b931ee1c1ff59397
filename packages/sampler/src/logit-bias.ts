import { SamplerConfigError } from './config-error';
import { checkTokenId, describeValue } from './validate';

/** Token id → value added to its logit; -Infinity bans the token. */
export type LogitBias = ReadonlyMap<number, number> | Readonly<Record<number, number>>;

/** Valid bias values: [-100, 100] as in the OpenAI API, or -Infinity to ban. */
export const MAX_LOGIT_BIAS = 100;

function checkBiasValue(token: number, value: unknown): number {
  const valid =
    typeof value === 'number' &&
    (value === Number.NEGATIVE_INFINITY || (value >= -MAX_LOGIT_BIAS && value <= MAX_LOGIT_BIAS));
  if (!valid) {
    throw new SamplerConfigError(
      'logitBias',
      `logitBias[${token}] must be in [-${MAX_LOGIT_BIAS}, ${MAX_LOGIT_BIAS}] or -Infinity (a ban), ` +
        `got ${describeValue(value)}`,
    );
  }
  return value;
}

function parseTokenKey(key: string): number {
  const token = Number(key);
  if (!Number.isInteger(token) || token < 0 || String(token) !== key) {
    throw new SamplerConfigError(
      'logitBias',
      `logitBias keys must be token ids (integers ≥ 0), got ${JSON.stringify(key)}`,
    );
  }
  return token;
}

/** The bias as validated [token, value] pairs: ids are integers ≥ 0, values in range. */
export function logitBiasEntries(bias: LogitBias): Array<[number, number]> {
  const pairs: Array<[unknown, unknown]> =
    bias instanceof Map
      ? [...bias.entries()]
      : Object.entries(bias).map(([key, value]): [unknown, unknown] => [parseTokenKey(key), value]);
  return pairs.map(([token, value]) => {
    if (typeof token !== 'number' || !Number.isInteger(token) || token < 0) {
      throw new SamplerConfigError(
        'logitBias',
        `logitBias keys must be token ids (integers ≥ 0), got ${describeValue(token)}`,
      );
    }
    return [token, checkBiasValue(token, value)];
  });
}

/** Adds `bias[id]` to `logits[id]` in place and returns `logits`. */
export function applyLogitBias(logits: Float32Array, bias: LogitBias): Float32Array {
  for (const [token, value] of logitBiasEntries(bias)) {
    logits[checkTokenId('logitBias', token, logits.length)] += value;
  }
  return logits;
}
