import type { Tokenizer } from './tokenizer';

/**
 * Decodes ids one at a time for display: `push` returns only text made of complete UTF-8 characters, keeping the
 * bytes of a character split across tokens until the rest arrive, so a UI never shows half a character. Bytes
 * that can never form a character become U+FFFD (the same rule as `decode`); `flush` ends the stream.
 */
export class StreamDecoder {
  private decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private previous: number | undefined;

  constructor(private readonly tokenizer: Tokenizer) {}

  /** Text completed by `id` (often empty while a multi-byte character is incomplete). */
  push(id: number): string {
    const bytes = this.tokenizer.decodeBytes([id], this.previous);
    this.previous = id;
    return this.decoder.decode(bytes, { stream: true });
  }

  /** Text of any bytes still held (U+FFFD for an unfinished character); the decoder can then start anew. */
  flush(): string {
    this.previous = undefined;
    return this.decoder.decode();
  }
}
