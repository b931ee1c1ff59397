/** A growable byte buffer for decoding. */
export class ByteSink {
  private buffer: Uint8Array;
  private length = 0;

  constructor(capacity = 64) {
    this.buffer = new Uint8Array(capacity);
  }

  push(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  pushByte(byte: number): void {
    this.reserve(1);
    this.buffer[this.length++] = byte;
  }

  /** The bytes written so far (a view, valid until the next push). */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + extra));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }
}
