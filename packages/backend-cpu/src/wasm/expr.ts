import { writeSigned, writeUnsigned } from './leb128';
import {
  MemOp,
  Op,
  RelaxedSimdOp,
  SIMD_I8X16_SHUFFLE,
  SIMD_PREFIX,
  SIMD_V128_CONST,
  SimdLaneOp,
  SimdMemOp,
  SimdOp,
  type ValType,
  Var,
} from './opcodes';

/** A local variable (or parameter) of the function being built. */
export interface Local {
  readonly kind: 'local';
  readonly index: number;
  readonly type: ValType;
}

/** Code that leaves one value on the operand stack. */
export interface Expr {
  readonly kind: 'expr';
  readonly emit: (code: number[]) => void;
}

/** Where an expression may stand: another expression, a local (read), or an i32 constant. */
export type Operand = Expr | Local | number;

function expr(emit: (code: number[]) => void): Expr {
  return { kind: 'expr', emit };
}

/** Appends the code of `operand` to `code`. */
export function emitOperand(code: number[], operand: Operand): void {
  if (typeof operand === 'number') {
    code.push(Var.i32Const);
    writeSigned(code, operand | 0);
  } else if (operand.kind === 'local') {
    code.push(Var.localGet);
    writeUnsigned(code, operand.index);
  } else {
    operand.emit(code);
  }
}

/** Appends a memarg: alignment (log2 bytes) and a constant byte offset. */
export function emitMemarg(code: number[], align: number, offset: number): void {
  writeUnsigned(code, align);
  writeUnsigned(code, offset);
}

/** A scalar instruction applied to its operands, pushed left to right. */
export function op(name: Op, ...operands: Operand[]): Expr {
  return expr((code) => {
    for (const o of operands) emitOperand(code, o);
    code.push(Op[name]);
  });
}

/** A SIMD instruction without immediates applied to its operands. */
export function simd(name: SimdOp, ...operands: Operand[]): Expr {
  return expr((code) => {
    for (const o of operands) emitOperand(code, o);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SimdOp[name]);
  });
}

/**
 * The form of relaxed SIMD's byte dot product the quantized products take: `i32`, `i32x4.relaxed_dot_i8x16_i7x16_add_s`
 * (one instruction with VNNI's vpdpbusd or Arm's sdot); `i16`, `i16x8.relaxed_dot_i8x16_i7x16_s` with each block's sums
 * then widened (by its scale where it has one), where the engine lowers the i32 form to x86's pmaddubsw, pmaddwd and
 * paddd (the i16 form is the pmaddubsw alone) or gives wrong sums in it (Node 20); `none`, plain SIMD's i16 dot
 * products on widened codes. Every form gives the same integers.
 */
export type ByteDot = 'none' | 'i32' | 'i16';

/** The module's optional instruction sets, chosen by what the engine validates. */
export interface KernelFeatures {
  /** Relaxed SIMD's multiply-add: multiply-adds use `f32x4.relaxed_madd` (one FMA where the hardware has it). */
  readonly relaxedMadd: boolean;
  /** Which form of relaxed SIMD's byte dot product the quantized products take, if any (see ByteDot). */
  readonly byteDot: ByteDot;
  /**
   * Not an instruction but the engine's compiler: it keeps a loop's 15 vector values (12 accumulators) in registers
   * while the loop's loads are independent of one another, where V8 up to 12.9 schedules every load first and spills
   * (see `gemm_few_t`, which takes wider blocks where this holds).
   */
  readonly wideTiles: boolean;
}

/** Only the instructions of WebAssembly SIMD (128-bit), which every supported engine has, in the narrow tiles. */
export const BASELINE_FEATURES: KernelFeatures = {
  relaxedMadd: false,
  byteDot: 'none',
  wideTiles: false,
};

/** acc + a * b on f32x4: one relaxed multiply-add with relaxed SIMD, else a multiply and an add. */
export function mulAdd(features: KernelFeatures, a: Operand, b: Operand, acc: Operand): Expr {
  if (!features.relaxedMadd) return simd('f32x4.add', acc, simd('f32x4.mul', a, b));
  return relaxedSimd('f32x4.relaxed_madd', a, b, acc);
}

/** A relaxed SIMD instruction applied to its operands: only in modules built with the feature it belongs to. */
export function relaxedSimd(name: RelaxedSimdOp, ...operands: Operand[]): Expr {
  return expr((code) => {
    for (const o of operands) emitOperand(code, o);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, RelaxedSimdOp[name]);
  });
}

/**
 * Relaxed SIMD's byte dot product in its i16 form (ByteDot `i16`): each lane the sum of two products of a's signed
 * bytes and b's bytes, exact where b's are 0..127 and the sum fits in i16.
 */
export function wordDot(a: Operand, b: Operand): Expr {
  return relaxedSimd('i16x8.relaxed_dot_i8x16_i7x16_s', a, b);
}

/** A SIMD lane instruction (e.g. extract_lane) on `vector`. */
export function lane(name: SimdLaneOp, vector: Operand, index: number): Expr {
  return expr((code) => {
    emitOperand(code, vector);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SimdLaneOp[name]);
    code.push(index);
  });
}

/**
 * Picks four 32-bit lanes out of `a` (lanes 0-3) and `b` (lanes 4-7), as i8x16.shuffle with the
 * byte indices of those lanes.
 */
export function shuffle32(a: Operand, b: Operand, lanes: readonly [number, number, number, number]): Expr {
  return expr((code) => {
    emitOperand(code, a);
    emitOperand(code, b);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SIMD_I8X16_SHUFFLE);
    for (const l of lanes) code.push(4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3);
  });
}

/** A scalar load from byte address `address + offset`. */
export function load(
  name: Extract<MemOp, 'f32.load' | 'f64.load' | 'i32.load' | 'i32.load8_s' | 'i32.load8_u'>,
  address: Operand,
  offset = 0,
): Expr {
  return expr((code) => {
    emitOperand(code, address);
    code.push(MemOp[name].code);
    emitMemarg(code, MemOp[name].align, offset);
  });
}

/** A SIMD load (full vector or splat) from byte address `address + offset`. */
export function simdLoad(name: Exclude<SimdMemOp, 'v128.store'>, address: Operand, offset = 0): Expr {
  return expr((code) => {
    emitOperand(code, address);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SimdMemOp[name].code);
    emitMemarg(code, SimdMemOp[name].align, offset);
  });
}

/** An f32 constant. */
export function f32(value: number): Expr {
  return expr((code) => {
    code.push(Var.f32Const);
    const bytes = new Uint8Array(new Float32Array([value]).buffer);
    code.push(...bytes);
  });
}

/** An f64 constant. */
export function f64(value: number): Expr {
  return expr((code) => {
    code.push(Var.f64Const);
    code.push(...new Uint8Array(new Float64Array([value]).buffer));
  });
}

/** A v128 constant with `value` (rounded to f32) in all four f32 lanes. */
export function f32x4(value: number): Expr {
  return expr((code) => {
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SIMD_V128_CONST);
    const bytes = new Uint8Array(new Float32Array([value, value, value, value]).buffer);
    code.push(...bytes);
  });
}

/** A v128 constant with the four i32 lanes `lanes`. */
export function i32x4(lanes: readonly [number, number, number, number]): Expr {
  return expr((code) => {
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SIMD_V128_CONST);
    code.push(...new Uint8Array(Int32Array.from(lanes).buffer));
  });
}

/** The all-zero v128 constant. */
export const v128Zero: Expr = expr((code) => {
  code.push(SIMD_PREFIX);
  writeUnsigned(code, SIMD_V128_CONST);
  for (let i = 0; i < 16; i++) code.push(0);
});

/** i32 a + b. */
const iadd = (a: Operand, b: Operand): Expr => op('i32.add', a, b);
/** i32 a - b. */
const isub = (a: Operand, b: Operand): Expr => op('i32.sub', a, b);
/** i32 a · b. */
const imul = (a: Operand, b: Operand): Expr => op('i32.mul', a, b);
/** The smaller of two signed i32 (both operands are emitted twice). */
const imin = (a: Operand, b: Operand): Expr => op('select', a, b, op('i32.lt_s', a, b));
/** The byte length of `elements` 4-byte elements (elements << 2). */
const bytes = (elements: Operand): Expr => op('i32.shl', elements, 2);
/** f32 a + b. */
const fadd = (a: Operand, b: Operand): Expr => op('f32.add', a, b);
/** f32 a · b. */
const fmul = (a: Operand, b: Operand): Expr => op('f32.mul', a, b);

/** The sum of the four f32 lanes of `v`, as (l0 + l1) + (l2 + l3) (`v` is emitted four times: pass a local). */
export function laneSum(v: Local): Expr {
  const at = (index: number) => lane('f32x4.extract_lane', v, index);
  return fadd(fadd(at(0), at(1)), fadd(at(2), at(3)));
}

/** The largest of the four f32 lanes of `v`, as max(max(l0, l1), max(l2, l3)) (`v` is emitted four times: pass a local). */
export function laneMax(v: Local): Expr {
  const at = (index: number) => lane('f32x4.extract_lane', v, index);
  return op('f32.max', op('f32.max', at(0), at(1)), op('f32.max', at(2), at(3)));
}

/** Lanes [x0 + x2, y0 + y2, x1 + x3, y1 + y3]: half of the lane sums of x and y (each is emitted twice). */
export function pairSums(x: Local, y: Local): Expr {
  return simd('f32x4.add', shuffle32(x, y, [0, 4, 1, 5]), shuffle32(x, y, [2, 6, 3, 7]));
}

/**
 * [sum of x's lanes, of y's, of z's, of u's] from xy = pairSums(x, y) and zu = pairSums(z, u) (each emitted twice):
 * four dot products' sums transposed into one vector.
 */
export function laneSums4(xy: Local, zu: Local): Expr {
  return simd('f32x4.add', shuffle32(xy, zu, [0, 1, 4, 5]), shuffle32(xy, zu, [2, 3, 6, 7]));
}

/** The scalar shorthands the kernels share: i32 add, sub, mul, min and bytes (elements << 2); f32 fadd and fmul. */
export const scalar = { add: iadd, sub: isub, mul: imul, min: imin, bytes, fadd, fmul } as const;
