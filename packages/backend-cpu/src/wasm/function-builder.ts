import { emitMemarg, emitOperand, f32x4, type Local, load, type Operand, op } from './expr';
import { writeUnsigned } from './leb128';
import {
  Control,
  EMPTY_BLOCK_TYPE,
  MEMORY_FILL,
  MemOp,
  SIMD_PREFIX,
  SimdMemOp,
  ValType,
  Var,
} from './opcodes';

/** A branch target: the block or loop it was created for. */
export interface Label {
  readonly depth: number;
}

/**
 * Builds the body of one WebAssembly function (with no results) from structured statements;
 * expressions come from `./expr`. Locals are declared on the fly.
 */
export class FunctionBuilder {
  readonly params: readonly Local[];
  readonly #locals: ValType[] = [];
  readonly #code: number[] = [];
  /** Code run before the body: the sets of the `constant` locals. */
  readonly #entry: number[] = [];
  /** The `constant` locals by the bits of their f32 value. */
  readonly #constants = new Map<number, Local>();
  /** While `interleave` records a copy: its statements, each encoded on its own. */
  #statements: number[][] | undefined;
  #depth = 0;

  constructor(readonly paramTypes: readonly ValType[]) {
    this.params = paramTypes.map((type, index) => ({ kind: 'local', index, type }));
  }

  /** Declares a new local of `type`. */
  local(type: ValType): Local {
    const index = this.paramTypes.length + this.#locals.length;
    this.#locals.push(type);
    return { kind: 'local', index, type };
  }

  /** Declares `count` new locals of `type`. */
  locals(type: ValType, count: number): Local[] {
    return Array.from({ length: count }, () => this.local(type));
  }

  /**
   * A local holding `value` (rounded to f32) in all four lanes, set once at the function's entry; the same local for
   * the same value. Use it for constants inside loops: Node 26's V8 rebuilds an inline v128.const at every use in a
   * loop (GELU over [12,64,512] on one thread: 850-900 us inline, 430-550 us from locals; Node 20 the same either way),
   * while a local stays in a register or one load away.
   */
  constant(value: number): Local {
    const key = new Uint32Array(Float32Array.of(value).buffer)[0]; // the f32's bits: -0 and each NaN kept apart
    let local = this.#constants.get(key);
    if (local === undefined) {
      local = this.local(ValType.v128);
      this.#constants.set(key, local);
      emitOperand(this.#entry, f32x4(value));
      this.#entry.push(Var.localSet);
      writeUnsigned(this.#entry, local.index);
    }
    return local;
  }

  /** A local holding `byte` in all 16 byte lanes, set once at the function's entry (see `constant`). */
  constantBytes(byte: number): Local {
    // A byte below 0x7f never makes the four-byte pattern a NaN (see constantBits).
    if (!Number.isInteger(byte) || byte < 0 || byte >= 0x7f)
      throw new Error(`constantBytes: ${byte} is not in [0, 0x7f)`);
    return this.constantBits(byte * 0x01010101);
  }

  /**
   * A local holding the 32-bit pattern `bits` in all four lanes, set once at the function's entry (see `constant`,
   * which takes it as the f32 of those bits); throws on a NaN pattern, whose bits a Float32Array need not keep.
   */
  constantBits(bits: number): Local {
    const value = new Float32Array(Uint32Array.of(bits).buffer)[0];
    if (Number.isNaN(value)) throw new Error(`constantBits: 0x${(bits >>> 0).toString(16)} is a NaN pattern`);
    return this.constant(value);
  }

  /** The code a statement goes to: the body, or its own piece while `interleave` records. */
  #statement(): number[] {
    if (!this.#statements) return this.#code;
    const piece: number[] = [];
    this.#statements.push(piece);
    return piece;
  }

  /** The body's code, for control flow, which `interleave` cannot reorder. */
  #control(): number[] {
    if (this.#statements) throw new Error('FunctionBuilder.interleave: a body may only set locals and store');
    return this.#code;
  }

  /** local = value. */
  set(local: Local, value: Operand): void {
    const code = this.#statement();
    emitOperand(code, value);
    code.push(Var.localSet);
    writeUnsigned(code, local.index);
  }

  /** Scalar store of `value` at byte address `address + offset`. */
  store(
    name: Extract<MemOp, 'f32.store' | 'f64.store' | 'i32.store' | 'i32.store16'>,
    address: Operand,
    value: Operand,
    offset = 0,
  ): void {
    const code = this.#statement();
    emitOperand(code, address);
    emitOperand(code, value);
    code.push(MemOp[name].code);
    emitMemarg(code, MemOp[name].align, offset);
  }

  /** Loads the i32 at byte address `address` and drops it: brings its cache line in ahead of use. */
  touch(address: Operand): void {
    const code = this.#statement();
    emitOperand(code, load('i32.load', address));
    code.push(Control.drop);
  }

  /** memory.fill: sets `bytes` bytes from byte address `address` to the low byte of `value`. */
  fillMemory(address: Operand, value: Operand, bytes: Operand): void {
    const code = this.#statement();
    for (const operand of [address, value, bytes]) emitOperand(code, operand);
    code.push(...MEMORY_FILL);
  }

  /** v128 store of `value` at byte address `address + offset`. */
  storeV128(address: Operand, value: Operand, offset = 0): void {
    const code = this.#statement();
    emitOperand(code, address);
    emitOperand(code, value);
    code.push(SIMD_PREFIX);
    writeUnsigned(code, SimdMemOp['v128.store'].code);
    emitMemarg(code, SimdMemOp['v128.store'].align, offset);
  }

  /**
   * The straight-line code of `copies` independent computations (`body(copy)`, which may only set locals and
   * store), their statements interleaved: each copy's first, then each copy's second, and so on. A long chain of
   * dependent vector operations (an exp's range reduction and polynomial) then has others beside it within an
   * out-of-order core's window, where one copy after another would wait on its latency.
   */
  interleave(copies: number, body: (copy: number) => void): void {
    if (this.#statements) throw new Error('FunctionBuilder.interleave: already interleaving');
    const recorded: number[][][] = [];
    try {
      for (let copy = 0; copy < copies; copy++) {
        this.#statements = [];
        body(copy);
        recorded.push(this.#statements);
      }
    } finally {
      this.#statements = undefined;
    }
    const longest = Math.max(0, ...recorded.map((statements) => statements.length));
    for (let i = 0; i < longest; i++) {
      for (const statements of recorded) if (i < statements.length) this.#code.push(...statements[i]);
    }
  }

  /** Calls function `index` of the module with `args`; the callee returns nothing. */
  call(index: number, ...args: Operand[]): void {
    const code = this.#control();
    for (const a of args) emitOperand(code, a);
    code.push(Control.call);
    writeUnsigned(code, index);
  }

  /** A block; branching to its label jumps past its end. */
  block(body: (end: Label) => void): void {
    this.#structured(Control.block, body);
  }

  /** A loop; branching to its label jumps back to its start. */
  loop(body: (start: Label) => void): void {
    this.#structured(Control.loop, body);
  }

  /** if (condition) then() [else otherwise()]. */
  if(condition: Operand, then: () => void, otherwise?: () => void): void {
    emitOperand(this.#control(), condition);
    this.#code.push(Control.if, EMPTY_BLOCK_TYPE);
    this.#depth++;
    then();
    if (otherwise) {
      this.#code.push(Control.else);
      otherwise();
    }
    this.#code.push(Control.end);
    this.#depth--;
  }

  /** Traps: for a kernel the module carries but the engine's features leave without a body. */
  trap(): void {
    this.#control().push(Control.unreachable);
  }

  /** Branches to `label` when `condition` is non-zero. */
  brIf(label: Label, condition: Operand): void {
    emitOperand(this.#control(), condition);
    this.#code.push(Control.brIf);
    writeUnsigned(this.#code, this.#depth - label.depth);
  }

  /** Unconditional branch to `label`. */
  br(label: Label): void {
    this.#control().push(Control.br);
    writeUnsigned(this.#code, this.#depth - label.depth);
  }

  /**
   * for (counter = from; counter < to; counter += step) body(), comparing signed; `to` and
   * `step` are re-evaluated each iteration.
   */
  for(counter: Local, from: Operand, to: Operand, step: Operand, body: () => void): void {
    this.set(counter, from);
    this.block((exit) => {
      this.loop((again) => {
        this.brIf(exit, op('i32.le_s', to, counter));
        body();
        this.set(counter, op('i32.add', counter, step));
        this.br(again);
      });
    });
  }

  /** The function body as encoded in the code section (without the size prefix). */
  encode(): number[] {
    if (this.#depth !== 0) throw new Error(`function body has ${this.#depth} unclosed blocks`);
    const out: number[] = [];
    const groups: { type: ValType; count: number }[] = [];
    for (const type of this.#locals) {
      const last = groups[groups.length - 1];
      if (last && last.type === type) last.count++;
      else groups.push({ type, count: 1 });
    }
    writeUnsigned(out, groups.length);
    for (const g of groups) {
      writeUnsigned(out, g.count);
      out.push(g.type);
    }
    for (const byte of this.#entry) out.push(byte);
    for (const byte of this.#code) out.push(byte);
    out.push(Control.end);
    return out;
  }

  #structured(opcode: number, body: (label: Label) => void): void {
    this.#control().push(opcode, EMPTY_BLOCK_TYPE);
    this.#depth++;
    body({ depth: this.#depth });
    this.#code.push(Control.end);
    this.#depth--;
  }
}
