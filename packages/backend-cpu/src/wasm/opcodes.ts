/** The module preamble: `\0asm` and version 1. */
export const MAGIC_AND_VERSION = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00] as const;

/** Ids of the module sections the builder writes. */
export const Section = { type: 1, import: 2, function: 3, export: 7, code: 10 } as const;

/** The form byte of a function type. */
export const FUNC_TYPE = 0x60;
/** The import kind of a memory, and the export kind of a function. */
export const IMPORT_MEMORY = 0x02;
export const EXPORT_FUNC = 0x00;
/** Memory limits flags: minimum and maximum, and shared as well. */
export const Limits = { bounded: 0x01, shared: 0x03 } as const;

/** Value types of the WebAssembly binary format. */
export const ValType = {
  i32: 0x7f,
  f32: 0x7d,
  f64: 0x7c,
  v128: 0x7b,
} as const;
export type ValType = (typeof ValType)[keyof typeof ValType];

/** Single-byte instructions without immediates, by their text-format name. */
export const Op = {
  select: 0x1b,
  'i32.eq': 0x46,
  'i32.lt_s': 0x48,
  'i32.lt_u': 0x49,
  'i32.gt_s': 0x4a,
  'i32.le_s': 0x4c,
  'i32.ge_s': 0x4e,
  'i32.ge_u': 0x4f,
  'f32.eq': 0x5b,
  'f32.ne': 0x5c,
  'f32.gt': 0x5e,
  'i32.add': 0x6a,
  'i32.sub': 0x6b,
  'i32.mul': 0x6c,
  'i32.div_u': 0x6e,
  'i32.and': 0x71,
  'i32.or': 0x72,
  'i32.shl': 0x74,
  'i32.shr_u': 0x76,
  'f32.add': 0x92,
  'f32.sub': 0x93,
  'f32.mul': 0x94,
  'f32.div': 0x95,
  'f32.max': 0x97,
  'f64.sqrt': 0x9f,
  'f64.add': 0xa0,
  'f64.sub': 0xa1,
  'f64.mul': 0xa2,
  'f64.div': 0xa3,
  'f32.convert_i32_s': 0xb2,
  'f32.demote_f64': 0xb6,
  'f64.convert_i32_u': 0xb8,
  'f64.promote_f32': 0xbb,
  'i32.reinterpret_f32': 0xbc,
  'f32.reinterpret_i32': 0xbe,
} as const;
export type Op = keyof typeof Op;

/** Control instructions: with a block type, a label or a function index immediate, or none. */
export const Control = {
  unreachable: 0x00,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  call: 0x10,
  drop: 0x1a,
} as const;

/** Bulk memory's memory.fill: the 0xfc prefix, its code, then the memory index (0). */
export const MEMORY_FILL = [0xfc, 0x0b, 0x00] as const;

/** The block type of a block, loop or if without parameters or results. */
export const EMPTY_BLOCK_TYPE = 0x40;

/** Variable and constant instructions. */
export const Var = {
  localGet: 0x20,
  localSet: 0x21,
  i32Const: 0x41,
  f32Const: 0x43,
  f64Const: 0x44,
} as const;

/** Scalar memory instructions (followed by a memarg), with the natural alignment as log2 bytes. */
export const MemOp = {
  'i32.load': { code: 0x28, align: 2 },
  'i32.load8_s': { code: 0x2c, align: 0 },
  'i32.load8_u': { code: 0x2d, align: 0 },
  'f32.load': { code: 0x2a, align: 2 },
  'f64.load': { code: 0x2b, align: 3 },
  'i32.store': { code: 0x36, align: 2 },
  'i32.store16': { code: 0x3b, align: 1 },
  'f32.store': { code: 0x38, align: 2 },
  'f64.store': { code: 0x39, align: 3 },
} as const;
export type MemOp = keyof typeof MemOp;

/** The prefix byte of all SIMD instructions; the SIMD opcode follows as unsigned LEB128. */
export const SIMD_PREFIX = 0xfd;

/** SIMD memory instructions (followed by a memarg), with the natural alignment as log2 bytes. */
export const SimdMemOp = {
  'v128.load': { code: 0x00, align: 4 },
  'v128.load8x8_s': { code: 0x01, align: 3 },
  'v128.load32_splat': { code: 0x09, align: 2 },
  'v128.store': { code: 0x0b, align: 4 },
} as const;
export type SimdMemOp = keyof typeof SimdMemOp;

/** SIMD instructions without immediates. */
export const SimdOp = {
  'i8x16.splat': 0x0f,
  'i16x8.splat': 0x10,
  'i32x4.splat': 0x11,
  'f32x4.splat': 0x13,
  'i32x4.lt_s': 0x39,
  'i32x4.ge_s': 0x3f,
  'f32x4.eq': 0x41,
  'f32x4.lt': 0x43,
  'f32x4.gt': 0x44,
  'v128.and': 0x4e,
  'v128.andnot': 0x4f,
  'v128.or': 0x50,
  'v128.bitselect': 0x52,
  'f32x4.demote_f64x2_zero': 0x5e,
  'f64x2.promote_low_f32x4': 0x5f,
  'i8x16.narrow_i16x8_s': 0x65,
  'i8x16.narrow_i16x8_u': 0x66,
  'f32x4.nearest': 0x6a,
  'i8x16.shr_u': 0x6d,
  'i8x16.sub': 0x71,
  'i32x4.extadd_pairwise_i16x8_s': 0x7e,
  'i16x8.narrow_i32x4_s': 0x85,
  'i16x8.extend_low_i8x16_s': 0x87,
  'i16x8.extend_high_i8x16_s': 0x88,
  'i16x8.extend_low_i8x16_u': 0x89,
  'i16x8.shl': 0x8b,
  'i16x8.shr_u': 0x8d,
  'i16x8.add': 0x8e,
  'i16x8.sub': 0x91,
  'i32x4.extend_low_i16x8_s': 0xa7,
  'i32x4.extend_high_i16x8_s': 0xa8,
  'i32x4.shl': 0xab,
  'i32x4.shr_s': 0xac,
  'i32x4.shr_u': 0xad,
  'i32x4.add': 0xae,
  'i32x4.sub': 0xb1,
  'i32x4.mul': 0xb5,
  'i32x4.dot_i16x8_s': 0xba,
  'f32x4.abs': 0xe0,
  'f32x4.sqrt': 0xe3,
  'f32x4.add': 0xe4,
  'f32x4.sub': 0xe5,
  'f32x4.mul': 0xe6,
  'f32x4.div': 0xe7,
  'f32x4.min': 0xe8,
  'f32x4.max': 0xe9,
  /** b < a ? b : a: one minps on x86, where `f32x4.min` needs NaN and signed-zero fix-ups. */
  'f32x4.pmin': 0xea,
  /** a < b ? b : a, like `f32x4.pmin`. */
  'f32x4.pmax': 0xeb,
  'f64x2.add': 0xf0,
  'i32x4.trunc_sat_f32x4_s': 0xf8,
  'f32x4.convert_i32x4_s': 0xfa,
} as const;
export type SimdOp = keyof typeof SimdOp;

/** Relaxed SIMD instructions (Node 22+, Node 20 behind a flag, current browsers): a * b + c, fused where the hardware has FMA; byte dot products. */
export const RelaxedSimdOp = {
  'f32x4.relaxed_madd': 0x105,
  /** The sums of two products of signed bytes of a and bytes of b, as i16, exact where b's bytes are 0-127. */
  'i16x8.relaxed_dot_i8x16_i7x16_s': 0x112,
  /** c + the sums of four products of signed bytes of a and bytes of b, exact where b's bytes are 0-127. */
  'i32x4.relaxed_dot_i8x16_i7x16_add_s': 0x113,
} as const;
export type RelaxedSimdOp = keyof typeof RelaxedSimdOp;

/** SIMD lane instructions (followed by one lane-index byte). */
export const SimdLaneOp = {
  'i32x4.extract_lane': 0x1b,
  'f32x4.extract_lane': 0x1f,
  'f64x2.extract_lane': 0x21,
} as const;
export type SimdLaneOp = keyof typeof SimdLaneOp;

/** `v128.const` takes 16 immediate bytes. */
export const SIMD_V128_CONST = 0x0c;

/** `i8x16.shuffle` takes 16 immediate lane indices (0-31 over the bytes of both operands). */
export const SIMD_I8X16_SHUFFLE = 0x0d;
