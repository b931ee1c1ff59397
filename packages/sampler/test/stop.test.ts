import { describe, expect, it } from 'vitest';
import { StoppingCriteria, StopStringMatcher } from '../src/index';

/** Feeds chunks one by one; returns what each step emitted and the stop string found. */
function feed(
  matcher: StopStringMatcher,
  chunks: string[],
): { emitted: string[]; stopString: string | null } {
  const emitted: string[] = [];
  let stopString: string | null = null;
  for (const chunk of chunks) {
    const step = matcher.push(chunk);
    emitted.push(step.text);
    stopString = step.stopString;
    if (stopString !== null) break;
  }
  return { emitted, stopString };
}

describe('StopStringMatcher', () => {
  it('finds a stop string inside one chunk and drops everything after it', () => {
    expect(new StopStringMatcher(['###']).push('Hello###world')).toEqual({
      text: 'Hello',
      stopString: '###',
    });
  });

  it('finds a stop string spanning two chunks, holding back its start', () => {
    expect(feed(new StopStringMatcher(['###']), ['Hello#', '##rest'])).toEqual({
      emitted: ['Hello', ''],
      stopString: '###',
    });
  });

  it('finds a stop string spanning three chunks', () => {
    expect(feed(new StopStringMatcher(['<end>']), ['ab', '<e', 'n', 'd>x'])).toEqual({
      emitted: ['ab', '', '', ''],
      stopString: '<end>',
    });
  });

  it('handles overlapping prefixes: "aab" in "aaab"', () => {
    expect(feed(new StopStringMatcher(['aab']), ['a', 'a', 'a', 'b'])).toEqual({
      emitted: ['', '', 'a', ''],
      stopString: 'aab',
    });
    expect(new StopStringMatcher(['aab']).push('aaab')).toEqual({ text: 'a', stopString: 'aab' });
  });

  it('releases a false start once it cannot begin a stop string', () => {
    expect(feed(new StopStringMatcher(['<end>']), ['<e', 'x', 'y'])).toEqual({
      emitted: ['', '<ex', 'y'],
      stopString: null,
    });
  });

  it('never emits part of a stop string, whatever the chunking', () => {
    const text = 'one <en two <e<end> three';
    for (let size = 1; size <= 6; size++) {
      const chunks = text.match(new RegExp(`[^]{1,${size}}`, 'g')) ?? [];
      const { emitted, stopString } = feed(new StopStringMatcher(['<end>']), chunks);
      expect(emitted.join('')).toBe('one <en two <e');
      expect(stopString).toBe('<end>');
    }
  });

  it('with several stop strings, stops at the earliest; at the same place, at the first listed', () => {
    expect(new StopStringMatcher(['\n\n', 'User:']).push('Hi\nUser: x')).toEqual({
      text: 'Hi\n',
      stopString: 'User:',
    });
    expect(new StopStringMatcher(['bc', 'abcd']).push('xabcd')).toEqual({ text: 'x', stopString: 'abcd' });
    expect(new StopStringMatcher(['ab', 'abc']).push('abc')).toEqual({ text: '', stopString: 'ab' });
  });

  it('holds back the longest tail that could start any stop string', () => {
    const matcher = new StopStringMatcher(['xyz', 'yq']);
    expect(matcher.push('axy')).toEqual({ text: 'a', stopString: null });
    expect(matcher.push('q')).toEqual({ text: 'x', stopString: 'yq' });
  });

  it('flush() returns the held-back text at the end', () => {
    const matcher = new StopStringMatcher(['<end>']);
    expect(matcher.push('Hello <e')).toEqual({ text: 'Hello ', stopString: null });
    expect(matcher.flush()).toBe('<e');
    expect(matcher.flush()).toBe('');
  });

  it('passes text straight through without stop strings', () => {
    expect(new StopStringMatcher([]).push('anything')).toEqual({ text: 'anything', stopString: null });
  });

  it('refuses more text after a match until reset()', () => {
    const matcher = new StopStringMatcher(['!']);
    matcher.push('hi!');
    expect(matcher.matched).toBe('!');
    expect(matcher.flush()).toBe('');
    expect(() => matcher.push('more')).toThrow('StopStringMatcher: already stopped at "!"; call reset()');
    matcher.reset();
    expect(matcher.matched).toBeNull();
    expect(matcher.push('ok')).toEqual({ text: 'ok', stopString: null });
  });
});

describe('StoppingCriteria', () => {
  it('stops on an EOS token without emitting its text, flushing held text', () => {
    const criteria = new StoppingCriteria({ eosTokenIds: [2, 3], stopStrings: ['<end>'] });
    expect(criteria.push(10, 'hi <')).toEqual({ text: 'hi ', reason: null });
    expect(criteria.push(3, '</s>')).toEqual({ text: '<', reason: 'eos' });
  });

  it('stops on a stop string spanning tokens', () => {
    const criteria = new StoppingCriteria({ stopStrings: ['\nUser'] });
    expect(criteria.push(1, 'Sure.\n')).toEqual({ text: 'Sure.', reason: null });
    expect(criteria.push(2, 'Us')).toEqual({ text: '', reason: null });
    expect(criteria.push(3, 'er: hi')).toEqual({ text: '', reason: 'stop-string' });
  });

  it('stops after maxNewTokens, emitting the last text and anything held', () => {
    const criteria = new StoppingCriteria({ maxNewTokens: 3, stopStrings: ['###'] });
    expect(criteria.push(1, 'a')).toEqual({ text: 'a', reason: null });
    expect(criteria.push(2, 'b')).toEqual({ text: 'b', reason: null });
    expect(criteria.push(3, 'c#')).toEqual({ text: 'c#', reason: 'max-tokens' });
    expect(criteria.count).toBe(3);
  });

  it('stops when the same token comes N times in a row', () => {
    const criteria = new StoppingCriteria({ repeatLimit: 3 });
    const reasons = [7, 7, 8, 8, 8].map((token) => criteria.push(token, 'x').reason);
    expect(reasons).toEqual([null, null, null, null, 'repetition']);
  });

  it('ranks reasons: eos, then stop string, then repetition, then max tokens', () => {
    const both = new StoppingCriteria({ eosTokenIds: [0], maxNewTokens: 1 });
    expect(both.push(0, '').reason).toBe('eos');
    const text = new StoppingCriteria({ stopStrings: ['!'], maxNewTokens: 1 });
    expect(text.push(5, 'a!').reason).toBe('stop-string');
    const repeat = new StoppingCriteria({ repeatLimit: 2, maxNewTokens: 2 });
    repeat.push(4, 'z');
    expect(repeat.push(4, 'z').reason).toBe('repetition');
  });

  it('flush() gives held text to a caller that stops on its own; reset() starts over', () => {
    const criteria = new StoppingCriteria({ stopStrings: ['<end>'], maxNewTokens: 1 });
    expect(criteria.push(1, 'ok <e')).toEqual({ text: 'ok <e', reason: 'max-tokens' });
    expect(() => criteria.push(2, 'x')).toThrow('generation already stopped (max-tokens); call reset()');
    criteria.reset();
    expect(criteria.count).toBe(0);
    const aborted = new StoppingCriteria({ stopStrings: ['<end>'] });
    expect(aborted.push(1, 'ok <e').text).toBe('ok ');
    expect(aborted.flush()).toBe('<e');
  });
});
