import { describe, expect, it } from 'vitest';
import { peerOutput } from '../src/peers/peer-output';

describe('peer output', () => {
  it('reads positive number fields of the last JSON line', () => {
    const output = peerOutput(
      'log line\n{"decode_tokens_per_s": 264.5, "prefill_tokens_per_s": 0, "name": "x"}\n',
    );
    expect(output.positive('decode_tokens_per_s')).toBe(264.5);
    expect(output.positive('prefill_tokens_per_s')).toBeUndefined();
    expect(output.positive('name')).toBeUndefined();
  });

  it('gives no fields when the last line is not JSON, and keeps the line for the error', () => {
    const output = peerOutput('{"ms_per_iter_median": 80}\nTraceback (most recent call last)');
    expect(output.positive('ms_per_iter_median')).toBeUndefined();
    expect(output.line).toBe('Traceback (most recent call last)');
  });
});
