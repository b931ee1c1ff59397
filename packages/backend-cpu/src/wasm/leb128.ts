/** Appends `value` (0 <= value < 2^32) as unsigned LEB128. */
export function writeUnsigned(out: number[], value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new Error(`unsigned LEB128: expected an integer in [0, 2^32), got ${value}`);
  }
  let rest = value;
  do {
    const byte = rest % 128;
    rest = Math.floor(rest / 128);
    out.push(rest === 0 ? byte : byte | 0x80);
  } while (rest !== 0);
}

/** Appends `value` (-2^31 <= value < 2^31) as signed LEB128. */
export function writeSigned(out: number[], value: number): void {
  if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
    throw new Error(`signed LEB128: expected a 32-bit integer, got ${value}`);
  }
  let rest = value;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return;
  }
}
