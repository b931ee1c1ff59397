import { FunctionBuilder } from './function-builder';
import { writeUnsigned } from './leb128';
import {
  EXPORT_FUNC,
  FUNC_TYPE,
  IMPORT_MEMORY,
  Limits,
  MAGIC_AND_VERSION,
  Section,
  type ValType,
} from './opcodes';

/** The linear memory a module imports as `env.memory`. */
export interface ImportedMemory {
  readonly initialPages: number;
  readonly maximumPages: number;
  readonly shared: boolean;
}

/** Assembles a module of functions without results over one imported memory. */
export class ModuleBuilder {
  readonly #functions: { name: string; exported: boolean; body: FunctionBuilder }[] = [];

  constructor(readonly memory: ImportedMemory) {}

  /**
   * Adds a function; `build` writes its body. Returns its index for `call`. Only exported
   * functions are visible to JavaScript.
   */
  func(
    name: string,
    params: readonly ValType[],
    build: (f: FunctionBuilder) => void,
    options: { exported: boolean } = { exported: true },
  ): number {
    if (this.#functions.some((f) => f.name === name))
      throw new Error(`wasm module: duplicate function ${name}`);
    const body = new FunctionBuilder(params);
    build(body);
    this.#functions.push({ name, exported: options.exported, body });
    return this.#functions.length - 1;
  }

  /** The binary module. */
  encode(): Uint8Array<ArrayBuffer> {
    const types: string[] = [];
    const typeIndex = this.#functions.map(({ body }) => {
      const key = body.paramTypes.join(',');
      if (!types.includes(key)) types.push(key);
      return types.indexOf(key);
    });
    const out: number[] = [...MAGIC_AND_VERSION];

    const typeSection: number[] = [];
    writeUnsigned(typeSection, types.length);
    for (const key of types) {
      const params = key === '' ? [] : key.split(',').map(Number);
      typeSection.push(FUNC_TYPE);
      writeUnsigned(typeSection, params.length);
      typeSection.push(...params);
      writeUnsigned(typeSection, 0);
    }
    section(out, Section.type, typeSection);

    const importSection: number[] = [];
    writeUnsigned(importSection, 1);
    name(importSection, 'env');
    name(importSection, 'memory');
    importSection.push(IMPORT_MEMORY, this.memory.shared ? Limits.shared : Limits.bounded);
    writeUnsigned(importSection, this.memory.initialPages);
    writeUnsigned(importSection, this.memory.maximumPages);
    section(out, Section.import, importSection);

    const functionSection: number[] = [];
    writeUnsigned(functionSection, this.#functions.length);
    for (const index of typeIndex) writeUnsigned(functionSection, index);
    section(out, Section.function, functionSection);

    const exportSection: number[] = [];
    writeUnsigned(exportSection, this.#functions.filter((f) => f.exported).length);
    this.#functions.forEach((f, index) => {
      if (!f.exported) return;
      name(exportSection, f.name);
      exportSection.push(EXPORT_FUNC);
      writeUnsigned(exportSection, index);
    });
    section(out, Section.export, exportSection);

    const codeSection: number[] = [];
    writeUnsigned(codeSection, this.#functions.length);
    for (const f of this.#functions) {
      const body = f.body.encode();
      writeUnsigned(codeSection, body.length);
      for (const byte of body) codeSection.push(byte);
    }
    section(out, Section.code, codeSection);
    return Uint8Array.from(out);
  }
}

function section(out: number[], id: number, contents: readonly number[]): void {
  out.push(id);
  writeUnsigned(out, contents.length);
  for (const byte of contents) out.push(byte);
}

function name(out: number[], text: string): void {
  const bytes = new TextEncoder().encode(text);
  writeUnsigned(out, bytes.length);
  out.push(...bytes);
}
