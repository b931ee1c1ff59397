/**
 * GPT-2's reversible byte-to-unicode alphabet: printable bytes (`!`..`~`, `¡`..`¬`, `®`..`ÿ`) stand for
 * themselves, the other 68 bytes map in order to U+0100 onwards (space is `Ġ`, newline `Ċ`). Byte-level BPE
 * vocabularies (Hugging Face `tokenizer.json`, Loom JSON) write token bytes in this alphabet.
 */
const byteToChar: string[] = new Array(256);
const charToByte = new Map<number, number>();

function isPrintable(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
}

let shifted = 0;
for (let byte = 0; byte < 256; byte++) {
  const codePoint = isPrintable(byte) ? byte : 256 + shifted++;
  byteToChar[byte] = String.fromCharCode(codePoint);
  charToByte.set(codePoint, byte);
}

/** Writes `bytes` in the byte-to-unicode alphabet. */
export function bytesToUnicode(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i++) text += byteToChar[bytes[i]];
  return text;
}

/** Bytes of a string written in the byte-to-unicode alphabet, or the index of the first character outside it. */
export function unicodeToBytes(text: string): Uint8Array | { readonly badIndex: number } {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const byte = charToByte.get(text.charCodeAt(i));
    if (byte === undefined) return { badIndex: i };
    bytes[i] = byte;
  }
  return bytes;
}
