/** Scalar types a kernel parameter may have. */
export type ParamType = 'u32' | 'i32' | 'f32';

interface Field {
  readonly name: string;
  readonly type: ParamType;
  /** Number of elements for an array field (stored as vec4s), undefined for a scalar. */
  readonly length: number | undefined;
  readonly offset: number;
}

type Values = Record<string, number | readonly number[]>;

/**
 * The uniform block of a kernel: declares the WGSL struct `Params` and packs matching
 * bytes, so the two cannot drift apart. Scalars pack tightly; arrays are `array<vec4<T>, n>`
 * (16-byte aligned), read in WGSL as `p.name[i / 4][i % 4]` (see `paramAt`).
 */
export class ParamLayout<V extends Values = Record<never, never>> {
  readonly #fields: readonly Field[];

  constructor(fields: readonly Field[] = []) {
    this.#fields = fields;
  }

  scalar<K extends string>(name: K, type: ParamType): ParamLayout<V & Record<K, number>> {
    return new ParamLayout<V & Record<K, number>>([
      ...this.#fields,
      { name, type, length: undefined, offset: this.#end() },
    ]);
  }

  array<K extends string>(
    name: K,
    type: ParamType,
    length: number,
  ): ParamLayout<V & Record<K, readonly number[]>> {
    const offset = Math.ceil(this.#end() / 16) * 16;
    return new ParamLayout<V & Record<K, readonly number[]>>([
      ...this.#fields,
      { name, type, length: Math.max(1, length), offset },
    ]);
  }

  /** Bytes of the struct, rounded to 16 as WGSL lays out uniform structs. */
  get byteSize(): number {
    return Math.max(16, Math.ceil(this.#end() / 16) * 16);
  }

  /** WGSL declaration of `struct Params`. */
  wgsl(): string {
    const members = this.#fields.map((f) =>
      f.length === undefined
        ? `  ${f.name}: ${f.type},`
        : `  ${f.name}: array<vec4<${f.type}>, ${vec4Count(f.length)}>,`,
    );
    if (members.length === 0) members.push('  unused: u32,');
    return `struct Params {\n${members.join('\n')}\n}`;
  }

  /** Bytes of `values` laid out as `Params`. */
  pack(values: V): ArrayBuffer {
    const bytes = new ArrayBuffer(this.byteSize);
    const view = new DataView(bytes);
    for (const f of this.#fields) {
      const value = values[f.name];
      if (f.length === undefined) {
        if (typeof value !== 'number') throw new Error(`kernel parameter ${f.name}: expected a number`);
        write(view, f.offset, f.type, value, f.name);
      } else {
        if (typeof value === 'number' || value.length > f.length) {
          throw new Error(`kernel parameter ${f.name}: expected at most ${f.length} numbers`);
        }
        for (let i = 0; i < value.length; i++) write(view, f.offset + 4 * i, f.type, value[i], f.name);
      }
    }
    return bytes;
  }

  #end(): number {
    const last = this.#fields[this.#fields.length - 1];
    if (!last) return 0;
    return last.offset + (last.length === undefined ? 4 : vec4Count(last.length) * 16);
  }
}

function vec4Count(length: number): number {
  return Math.ceil(length / 4);
}

function write(view: DataView, offset: number, type: ParamType, value: number, name: string): void {
  switch (type) {
    case 'u32':
      if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
        throw new Error(`kernel parameter ${name}: ${value} is not a u32`);
      }
      view.setUint32(offset, value, true);
      return;
    case 'i32':
      if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
        throw new Error(`kernel parameter ${name}: ${value} is not an i32`);
      }
      view.setInt32(offset, value, true);
      return;
    case 'f32':
      view.setFloat32(offset, value, true);
      return;
  }
}

/** WGSL expression reading element `index` (a constant) of array parameter `name`. */
export function paramAt(name: string, index: number): string {
  return `p.${name}[${index >> 2}][${index & 3}]`;
}
