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
