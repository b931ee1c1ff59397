const encoder = new TextEncoder();
/** Non-fatal: invalid bytes become U+FFFD (WHATWG rule); ignoreBOM keeps a leading U+FEFF in the text. */
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF-8 bytes of `text`; lone surrogates become U+FFFD. */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Writes the UTF-8 bytes of `text` into `target` (which must hold `3 * text.length` bytes); returns the count. */
export function utf8EncodeInto(text: string, target: Uint8Array): number {
  return encoder.encodeInto(text, target).written;
}

/** Text of UTF-8 `bytes`; invalid sequences become U+FFFD. */
export function utf8Decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Text of UTF-8 `bytes`, or undefined when they are not valid UTF-8. */
export function utf8DecodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** One char per byte (`U+0000`–`U+00FF`): a compact, exact Map key for a byte string. */
export function bytesKey(bytes: Uint8Array): string {
  let key = '';
  for (let i = 0; i < bytes.length; i++) key += String.fromCharCode(bytes[i]);
  return key;
}

/** Where bytes fail to be UTF-8: the offset of the first invalid sequence and how many there are. */
export interface InvalidUtf8 {
  readonly offset: number;
  /** Maximal invalid subsequences; decoding turns each into one U+FFFD. */
  readonly count: number;
}

/** The invalid sequences in `bytes`, delimited as WHATWG's UTF-8 decoder does, or undefined when they are UTF-8. */
export function findInvalidUtf8(bytes: Uint8Array): InvalidUtf8 | undefined {
  let offset = -1;
  let count = 0;
  for (let i = 0; i < bytes.length; ) {
    const start = i;
    const lead = bytes[i++];
    if (lead < 0x80) continue;
    // How many continuation bytes the lead byte takes, and the range of the first one (no overlong forms,
    // surrogates or code points past U+10FFFF).
    const needed = lead < 0xc2 ? 0 : lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : lead < 0xf5 ? 3 : 0;
    let lower = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    let upper = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    let valid = needed > 0;
    for (let k = 0; valid && k < needed; k++) {
      // A byte out of range ends the invalid sequence without being part of it.
      valid = i < bytes.length && bytes[i] >= lower && bytes[i] <= upper;
      if (valid) i++;
      lower = 0x80;
      upper = 0xbf;
    }
    if (!valid) {
      if (count === 0) offset = start;
      count++;
    }
  }
  return count === 0 ? undefined : { offset, count };
}
