import type { ByteSource } from '../byte-source';

/** Bytes read from the file at a time while walking a header. */
const WINDOW = 1 << 20;

/**
 * A forward reader over a byte source for variable-length headers: every read checks that the bytes exist in the
 * file before any is copied, and every length the file claims is checked against the bytes left before anything of
 * that length is allocated.
 */
export class Cursor {
  private window = new DataView(new ArrayBuffer(0));
  private windowStart = 0;
  offset = 0;

  constructor(private readonly source: ByteSource) {}

  get name(): string {
    return this.source.name;
  }

  get remaining(): number {
    return this.source.size - this.offset;
  }

  /** Throws, naming the file and `what`, unless `count` items of `bytesEach` bytes fit in what is left. */
  need(count: number, bytesEach: number, what: string): void {
    if (!(count * bytesEach <= this.remaining)) {
      throw new Error(
        `${this.name}: ${what} needs ${count * bytesEach} bytes at byte ${this.offset} but the file has ${this.remaining} left — the file is truncated or corrupt`,
      );
    }
  }

  /** A view of the next `length` bytes, advancing past them. */
  private take(length: number, what: string): { view: DataView; at: number } {
    this.need(length, 1, what);
    const end = this.offset + length;
    if (this.offset < this.windowStart || end > this.windowStart + this.window.byteLength) {
      this.windowStart = this.offset;
      this.window = new DataView(
        this.source.read(this.offset, Math.min(this.source.size, this.offset + Math.max(WINDOW, length))),
      );
    }
    const at = this.offset - this.windowStart;
    this.offset = end;
    return { view: this.window, at };
  }

  u8(what: string): number {
    const { view, at } = this.take(1, what);
    return view.getUint8(at);
  }

  u32(what: string): number {
    const { view, at } = this.take(4, what);
    return view.getUint32(at, true);
  }

  i32(what: string): number {
    const { view, at } = this.take(4, what);
    return view.getInt32(at, true);
  }

  f32(what: string): number {
    const { view, at } = this.take(4, what);
    return view.getFloat32(at, true);
  }

  f64(what: string): number {
    const { view, at } = this.take(8, what);
    return view.getFloat64(at, true);
  }

  /** A 64-bit unsigned integer, refused above 2^53 (no file Loom reads has offsets or counts that large). */
  u64(what: string): number {
    const { view, at } = this.take(8, what);
    const value = view.getBigUint64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new Error(`${this.name}: ${what} is ${value}, beyond 2^53 — the file is corrupt`);
    }
    return Number(value);
  }

  i64(what: string): number {
    const { view, at } = this.take(8, what);
    const value = view.getBigInt64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new Error(`${this.name}: ${what} is ${value}, beyond ±2^53 — the file is corrupt`);
    }
    return Number(value);
  }

  /** `length` bytes as UTF-8 text (invalid sequences are an error naming `what`). */
  text(length: number, what: string): string {
    const { view, at } = this.take(length, what);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(
        new Uint8Array(view.buffer, view.byteOffset + at, length),
      );
    } catch {
      throw new Error(`${this.name}: ${what} is not valid UTF-8 text — the file is corrupt`);
    }
  }
}
