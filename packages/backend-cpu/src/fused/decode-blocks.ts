import { QUANT_BLOCK, type QuantType, quantFormat } from '@loom/tensor';

/** Where a decoder writes values: f64 rows of the portable products, the backend's f32 (or f64) outputs. */
type Values = Float32Array | Float64Array;

/**
 * Writes the values of one block (its codes at byte `base` of `bytes`, its f32 scales from `scale` of `scales`) into
 * `row` from `at`, each computed in f64 from the exact codes and scales (see QuantizedWeight's layouts).
 */
type DecodeBlock = (
  bytes: Uint8Array,
  base: number,
  scales: ArrayLike<number>,
  scale: number,
  row: Values,
  at: number,
) => void;

/** Q8_0: d · q for 32 int8 codes. */
const decodeQ8_0: DecodeBlock = (bytes, base, scales, scale, row, at) => {
  const d = scales[scale];
  for (let i = 0; i < QUANT_BLOCK; i++) row[at + i] = d * ((bytes[base + i] << 24) >> 24);
};

/** Q4_0: d · (nibble − 8), values 0-15 from the low nibbles of the 16 bytes and 16-31 from the high ones. */
const decodeQ4_0: DecodeBlock = (bytes, base, scales, scale, row, at) => {
  const d = scales[scale];
  for (let i = 0; i < 16; i++) {
    row[at + i] = d * ((bytes[base + i] & 15) - 8);
    row[at + 16 + i] = d * ((bytes[base + i] >> 4) - 8);
  }
};

/** Q4_K: value 32s + l is d · (s_s & 63) · nibble − dmin · (m_s & 63), the nibble in byte 32(s >> 1) + l of the codes. */
const decodeQ4K: DecodeBlock = (bytes, base, scales, scale, row, at) => {
  const [d, dmin] = [scales[scale], scales[scale + 1]];
  for (let sub = 0; sub < 8; sub++) {
    const step = d * (bytes[base + sub] & 63);
    const min = dmin * (bytes[base + 8 + sub] & 63);
    const nibbles = base + 16 + 32 * (sub >> 1);
    const shift = 4 * (sub & 1);
    for (let l = 0; l < QUANT_BLOCK; l++) {
      row[at + sub * QUANT_BLOCK + l] = step * ((bytes[nibbles + l] >> shift) & 15) - min;
    }
  }
};

/** Q6_K: value v = 128h + 32k + l is d · s_(v / 16) · (q − 32), q's bits from low byte 64h + 32(k & 1) + l and high byte 32h + l. */
const decodeQ6K: DecodeBlock = (bytes, base, scales, scale, row, at) => {
  const d = scales[scale];
  for (let v = 0; v < 256; v++) {
    const [h, k, l] = [v >> 7, (v >> 5) & 3, v & 31];
    const nibble = (bytes[base + 16 + 64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 15;
    const pair = (bytes[base + 144 + 32 * h + l] >> (2 * k)) & 3;
    const s = (bytes[base + (v >> 4)] << 24) >> 24;
    row[at + v] = d * s * (nibble + 16 * pair - 32);
  }
};

const DECODERS: Readonly<Record<QuantType, DecodeBlock>> = {
  q8_0: decodeQ8_0,
  q4_0: decodeQ4_0,
  q4_k: decodeQ4K,
  q6_k: decodeQ6K,
};

/**
 * Writes row `index` of a `type` weight with rows of `length` values (`bytes`: its codes, `scales`: its f32 scales,
 * see QuantizedWeight) into `row` from `at`: the portable decoder the JavaScript products and row lookups share.
 */
export function decodeQuantRow(
  type: QuantType,
  bytes: Uint8Array,
  scales: ArrayLike<number>,
  index: number,
  length: number,
  row: Values,
  at = 0,
): void {
  const format = quantFormat(type);
  const decode = DECODERS[type];
  const blocks = length / format.values;
  for (let b = 0; b < blocks; b++) {
    const block = index * blocks + b;
    decode(bytes, 4 * format.words * block, scales, format.scales * block, row, at + b * format.values);
  }
}
