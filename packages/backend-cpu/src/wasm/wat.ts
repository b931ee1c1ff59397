import {
  Control,
  EMPTY_BLOCK_TYPE,
  EXPORT_FUNC,
  FUNC_TYPE,
  IMPORT_MEMORY,
  Limits,
  MAGIC_AND_VERSION,
  MemOp,
  Op,
  RelaxedSimdOp,
  Section,
  SIMD_I8X16_SHUFFLE,
  SIMD_PREFIX,
  SIMD_V128_CONST,
  SimdLaneOp,
  SimdMemOp,
  SimdOp,
  ValType,
  Var,
} from './opcodes';

/** Reads the parts of the binary format: bytes, LEB128 integers, names. */
class Reader {
  offset = 0;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.bytes.length;
  }

  byte(): number {
    if (this.offset >= this.bytes.length) {
      throw new Error(`wat: the module ends at byte ${this.offset} inside an instruction or section`);
    }
    return this.bytes[this.offset++];
  }

  take(count: number): Uint8Array {
    if (this.offset + count > this.bytes.length) {
      throw new Error(
        `wat: ${count} bytes wanted at byte ${this.offset}, the module has ${this.bytes.length}`,
      );
    }
    const out = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return out;
  }

  unsigned(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) return result;
    }
  }

  signed(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = this.byte();
      result |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    return shift < 32 && b & 0x40 ? result | (-1 << shift) : result;
  }

  name(): string {
    return new TextDecoder().decode(this.take(this.unsigned()));
  }
}

/** Text names of the codes of a table of named opcodes. */
function invert<T extends Record<string, number>>(table: T): Map<number, string> {
  return new Map(Object.entries(table).map(([name, code]) => [code, name]));
}

/** Text names of memory instructions by code, with their natural alignment. */
function invertMem(
  table: Record<string, { code: number; align: number }>,
): Map<number, { name: string; align: number }> {
  return new Map(Object.entries(table).map(([name, { code, align }]) => [code, { name, align }]));
}

const VAL_TYPES = invert(ValType);
const OPS = invert(Op);
const MEM_OPS = invertMem(MemOp);
const SIMD_OPS = invert({ ...SimdOp, ...RelaxedSimdOp });
const SIMD_MEM_OPS = invertMem(SimdMemOp);
const SIMD_LANE_OPS = invert(SimdLaneOp);
const VAR_TEXT: Readonly<Record<keyof typeof Var, string>> = {
  localGet: 'local.get',
  localSet: 'local.set',
  i32Const: 'i32.const',
  f32Const: 'f32.const',
  f64Const: 'f64.const',
};
const VARS = new Map<number, keyof typeof Var>(
  Object.entries(Var).map(([key, code]) => [code, key as keyof typeof Var]),
);

function valType(code: number): string {
  const name = VAL_TYPES.get(code);
  if (!name) throw new Error(`wat: unknown value type 0x${code.toString(16)}`);
  return name;
}

/** A float constant as WAT writes it. */
function floatText(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  return Object.is(value, -0) ? '-0' : String(value);
}

function memarg(r: Reader, natural: number): string {
  const align = r.unsigned();
  const offset = r.unsigned();
  const parts = [];
  if (offset !== 0) parts.push(`offset=${offset}`);
  if (align !== natural) parts.push(`align=${2 ** align}`);
  return parts.length > 0 ? ` ${parts.join(' ')}` : '';
}

/** One instruction after its first byte; the text of it, and how it changes the nesting. */
function instruction(
  r: Reader,
  code: number,
  functionName: (index: number) => string,
): { text: string; depth: -1 | 0 | 1 } {
  switch (code) {
    case Control.block:
    case Control.loop:
    case Control.if: {
      const type = r.byte();
      const name = code === Control.block ? 'block' : code === Control.loop ? 'loop' : 'if';
      return { text: type === EMPTY_BLOCK_TYPE ? name : `${name} (result ${valType(type)})`, depth: 1 };
    }
    case Control.else:
      return { text: 'else', depth: 0 };
    case Control.end:
      return { text: 'end', depth: -1 };
    case Control.br:
      return { text: `br ${r.unsigned()}`, depth: 0 };
    case Control.brIf:
      return { text: `br_if ${r.unsigned()}`, depth: 0 };
    case Control.call:
      return { text: `call ${functionName(r.unsigned())}`, depth: 0 };
    case Control.drop:
      return { text: 'drop', depth: 0 };
    case Control.unreachable:
      return { text: 'unreachable', depth: 0 };
  }
  const variable = VARS.get(code);
  if (variable) {
    const text = VAR_TEXT[variable];
    if (variable === 'i32Const') return { text: `${text} ${r.signed()}`, depth: 0 };
    if (variable === 'f32Const') {
      const value = new Float32Array(r.take(4).slice().buffer)[0];
      return { text: `${text} ${floatText(value)}`, depth: 0 };
    }
    if (variable === 'f64Const') {
      const value = new Float64Array(r.take(8).slice().buffer)[0];
      return { text: `${text} ${floatText(value)}`, depth: 0 };
    }
    return { text: `${text} ${r.unsigned()}`, depth: 0 };
  }
  const mem = MEM_OPS.get(code);
  if (mem) return { text: `${mem.name}${memarg(r, mem.align)}`, depth: 0 };
  const scalar = OPS.get(code);
  if (scalar) return { text: scalar, depth: 0 };
  if (code === SIMD_PREFIX) return { text: simdInstruction(r), depth: 0 };
  throw new Error(`wat: unknown opcode 0x${code.toString(16)} at byte ${r.offset - 1}`);
}

function simdInstruction(r: Reader): string {
  const code = r.unsigned();
  const mem = SIMD_MEM_OPS.get(code);
  if (mem) return `${mem.name}${memarg(r, mem.align)}`;
  if (code === SIMD_V128_CONST) {
    const lanes = new Uint32Array(r.take(16).slice().buffer);
    return `v128.const i32x4 ${Array.from(lanes, (l) => `0x${l.toString(16).padStart(8, '0')}`).join(' ')}`;
  }
  if (code === SIMD_I8X16_SHUFFLE) return `i8x16.shuffle ${Array.from(r.take(16)).join(' ')}`;
  const laneOp = SIMD_LANE_OPS.get(code);
  if (laneOp) return `${laneOp} ${r.byte()}`;
  const op = SIMD_OPS.get(code);
  if (op) return op;
  throw new Error(`wat: unknown SIMD opcode 0x${code.toString(16)} at byte ${r.offset}`);
}

/**
 * The text format (WAT) of a module built by ModuleBuilder, for reading: its types, memory
 * import, and each function with its export name, parameters, locals and instructions (one a
 * line, nested blocks indented). Only the sections and instructions the builder writes are
 * understood; anything else throws, naming the byte.
 */
export function moduleText(bytes: Uint8Array): string {
  const r = new Reader(bytes);
  const magic = Array.from(r.take(MAGIC_AND_VERSION.length));
  if (magic.some((b, i) => b !== MAGIC_AND_VERSION[i])) {
    throw new Error('wat: not a WebAssembly module of version 1 (the first 8 bytes differ)');
  }
  const types: { params: string[]; results: string[] }[] = [];
  const functionTypes: number[] = [];
  const exports = new Map<number, string>();
  const lines = ['(module'];
  const bodies: { start: number; end: number }[] = [];
  while (!r.done) {
    const id = r.byte();
    const size = r.unsigned();
    const end = r.offset + size;
    if (id === Section.type) {
      for (let count = r.unsigned(); count > 0; count--) {
        if (r.byte() !== FUNC_TYPE)
          throw new Error(`wat: a type at byte ${r.offset - 1} is not a function type`);
        const params = Array.from({ length: r.unsigned() }, () => valType(r.byte()));
        const results = Array.from({ length: r.unsigned() }, () => valType(r.byte()));
        types.push({ params, results });
      }
    } else if (id === Section.import) {
      for (let count = r.unsigned(); count > 0; count--) {
        const module = r.name();
        const field = r.name();
        if (r.byte() !== IMPORT_MEMORY) throw new Error(`wat: import ${module}.${field} is not a memory`);
        const flags = r.byte();
        const min = r.unsigned();
        const max = flags & Limits.bounded ? ` ${r.unsigned()}` : '';
        const shared = flags === Limits.shared ? ' shared' : '';
        lines.push(`  (import "${module}" "${field}" (memory ${min}${max}${shared}))`);
      }
    } else if (id === Section.function) {
      for (let count = r.unsigned(); count > 0; count--) functionTypes.push(r.unsigned());
    } else if (id === Section.export) {
      for (let count = r.unsigned(); count > 0; count--) {
        const name = r.name();
        const kind = r.byte();
        const index = r.unsigned();
        if (kind === EXPORT_FUNC) exports.set(index, name);
      }
    } else if (id === Section.code) {
      for (let count = r.unsigned(); count > 0; count--) {
        const length = r.unsigned();
        bodies.push({ start: r.offset, end: r.offset + length });
        r.offset += length;
      }
    } else {
      lines.push(`  ;; section ${id} (${size} bytes) not shown`);
    }
    r.offset = end;
  }
  types.forEach((t, i) => {
    const params = t.params.length > 0 ? ` (param ${t.params.join(' ')})` : '';
    const results = t.results.length > 0 ? ` (result ${t.results.join(' ')})` : '';
    lines.push(`  (type (;${i};) (func${params}${results}))`);
  });
  const functionName = (index: number) => `$${exports.get(index) ?? `f${index}`}`;
  bodies.forEach((body, index) => {
    const type = types[functionTypes[index]];
    if (!type) throw new Error(`wat: function ${index} has no type`);
    const exported = exports.get(index);
    const head = [`  (func ${functionName(index)} (;${index};)`];
    if (exported !== undefined) head.push(`(export "${exported}")`);
    head.push(`(type ${functionTypes[index]})`);
    if (type.params.length > 0) head.push(`(param ${type.params.join(' ')})`);
    lines.push(head.join(' '));
    const code = new Reader(bytes.subarray(0, body.end));
    code.offset = body.start;
    const locals: string[] = [];
    for (let groups = code.unsigned(); groups > 0; groups--) {
      const count = code.unsigned();
      const type = valType(code.byte());
      for (let i = 0; i < count; i++) locals.push(type);
    }
    if (locals.length > 0) lines.push(`    (local ${locals.join(' ')})`);
    let depth = 0;
    while (!code.done) {
      const { text, depth: change } = instruction(code, code.byte(), functionName);
      if (change === -1 && depth === 0) break; // the end of the body
      if (change === -1) depth--;
      const indent = '  '.repeat(2 + depth - (text === 'else' ? 1 : 0));
      lines.push(`${indent}${text}`);
      if (change === 1) depth++;
    }
    lines.push('  )');
  });
  lines.push(')');
  return `${lines.join('\n')}\n`;
}
