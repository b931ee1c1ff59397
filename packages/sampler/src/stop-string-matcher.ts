import { SamplerConfigError } from './config-error';
import { describeValue } from './validate';

/** What one chunk of text gives: the text safe to show, and the stop string once one is found. */
export interface StopStringStep {
  /** Text to emit now; never part of a stop string. */
  text: string;
  /** The stop string found (the earliest in the text; among ties, the first listed), else null. */
  stopString: string | null;
}

/** Checks stop strings: an array of non-empty strings. */
export function checkStopStrings(stopStrings: unknown): string[] {
  if (!Array.isArray(stopStrings)) {
    throw new SamplerConfigError(
      'stopStrings',
      `stopStrings must be an array of non-empty strings, got ${describeValue(stopStrings)}`,
    );
  }
  return stopStrings.map((stop: unknown, i) => {
    if (typeof stop !== 'string' || stop.length === 0) {
      throw new SamplerConfigError(
        'stopStrings',
        `stopStrings[${i}] must be a non-empty string, got ${stop === '' ? 'an empty string' : describeValue(stop)}`,
      );
    }
    return stop;
  });
}

/**
 * Finds stop strings in text that arrives in chunks (one decoded token at a time), also when a
 * stop string spans several chunks. Text is released only once it cannot be the start of a stop
 * string: the longest tail of the text seen so far that is a prefix of some stop string is held
 * back until later chunks settle it. On a match, the text before the stop string is released
 * and everything from the stop string on is dropped.
 */
export class StopStringMatcher {
  readonly stopStrings: readonly string[];
  private held = '';
  private found: string | null = null;

  constructor(stopStrings: readonly string[]) {
    this.stopStrings = checkStopStrings(stopStrings);
  }

  /** The stop string found so far, or null. */
  get matched(): string | null {
    return this.found;
  }

  /** Feeds the next chunk of decoded text. */
  push(chunk: string): StopStringStep {
    if (this.found !== null) {
      throw new Error(
        `StopStringMatcher: already stopped at ${JSON.stringify(this.found)}; call reset() before feeding more text`,
      );
    }
    const text = this.held + chunk;
    let at = -1;
    for (const stop of this.stopStrings) {
      const index = text.indexOf(stop);
      if (index >= 0 && (at < 0 || index < at)) {
        at = index;
        this.found = stop;
      }
    }
    if (this.found !== null) {
      this.held = '';
      return { text: text.slice(0, at), stopString: this.found };
    }
    const keep = this.partialMatchLength(text);
    this.held = text.slice(text.length - keep);
    return { text: text.slice(0, text.length - keep), stopString: null };
  }

  /** Releases the held-back text at the end of generation ('' after a match). */
  flush(): string {
    const text = this.held;
    this.held = '';
    return text;
  }

  /** Forgets held text and any match. */
  reset(): void {
    this.held = '';
    this.found = null;
  }

  /** Length of the longest tail of `text` that is a proper prefix of a stop string. */
  private partialMatchLength(text: string): number {
    let longest = 0;
    for (const stop of this.stopStrings) {
      for (let length = Math.min(stop.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(stop.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
