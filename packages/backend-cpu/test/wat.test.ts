import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { f32, f32x4, f64, lane, load, op, shuffle32, simd, simdLoad } from '../src/wasm/expr';
import { buildKernelModule } from '../src/wasm/kernel-module';
import { KERNEL_NAMES, KERNELS } from '../src/wasm/kernels';
import { ModuleBuilder } from '../src/wasm/module-builder';
import { ValType } from '../src/wasm/opcodes';
import { moduleText } from '../src/wasm/wat';
import { wasmForTests } from './wasm-for-tests';

const MEMORY = { initialPages: 1, maximumPages: 16, shared: false };

/** The instruction lines of function `name` in `text` (without its header, locals and closing line). */
function body(text: string, name: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  (func $${name} `));
  const end = lines.indexOf('  )', start);
  return lines
    .slice(start + 1, end)
    .filter((l) => !l.trimStart().startsWith('(local'))
    .map((l) => l.trim());
}

describe('the WAT dump of the kernel module', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('names every registered kernel with its parameters and the work area', () => {
    const text = moduleText(buildKernelModule({ initialPages: 1, maximumPages: 65536, shared: true }));
    expect(text.startsWith('(module\n  (import "env" "memory" (memory 1 65536 shared))')).toBe(true);
    expect(KERNEL_NAMES.length).toBe(KERNELS.length);
    for (const spec of KERNELS) {
      const header = text.split('\n').find((l) => l.includes(`(export "${spec.name}")`));
      expect(header, spec.name).toBeDefined();
      const types = [...spec.params.map(() => 'i32'), 'i32'].join(' ');
      expect(header).toContain(`(param ${types})`);
    }
    // The helpers of gemm are in the module but not exported.
    expect(text).toMatch(/ {2}\(func \$f\d+ \(;\d+;\) \(type \d+\) \(param i32/);
    expect(text).toMatch(/call \$f\d+/);
  });

  it('reads back the instructions a function was built from', () => {
    const mod = new ModuleBuilder(MEMORY);
    const helper = mod.func('helper', [ValType.i32], () => {}, { exported: false });
    mod.func('probe', [ValType.i32, ValType.i32], (f) => {
      const [x, y] = f.params;
      const sum = f.local(ValType.i32);
      const v = f.local(ValType.v128);
      const s = f.local(ValType.f32);
      f.set(sum, op('i32.add', x, -5));
      f.store('f32.store', y, f32(1.5), 8);
      f.set(v, shuffle32(simdLoad('v128.load', x, 16), f32x4(2), [1, 0, 3, 2]));
      f.set(s, lane('f32x4.extract_lane', simd('f32x4.mul', v, v), 3));
      f.set(s, op('f32.demote_f64', op('f64.mul', op('f64.promote_f32', load('f32.load', y)), f64(-0.25))));
      f.loop((again) => f.brIf(again, op('i32.lt_u', sum, 300)));
      f.if(
        x,
        () => f.call(helper, sum),
        () => f.storeV128(y, v),
      );
    });
    const bytes = mod.encode();
    expect(WebAssembly.validate(bytes)).toBe(true);
    const text = moduleText(bytes);
    expect(text).toContain('(func $probe (;1;) (export "probe") (type 1) (param i32 i32)');
    expect(text).toContain('    (local i32 v128 f32)');
    const two = '0x40000000';
    expect(body(text, 'probe')).toEqual([
      'local.get 0',
      'i32.const -5',
      'i32.add',
      'local.set 2',
      'local.get 1',
      'f32.const 1.5',
      'f32.store offset=8',
      'local.get 0',
      'v128.load offset=16',
      `v128.const i32x4 ${two} ${two} ${two} ${two}`,
      'i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11',
      'local.set 3',
      'local.get 3',
      'local.get 3',
      'f32x4.mul',
      'f32x4.extract_lane 3',
      'local.set 4',
      'local.get 1',
      'f32.load',
      'f64.promote_f32',
      'f64.const -0.25',
      'f64.mul',
      'f32.demote_f64',
      'local.set 4',
      'loop',
      'local.get 2',
      'i32.const 300',
      'i32.lt_u',
      'br_if 0',
      'end',
      'local.get 0',
      'if',
      'local.get 2',
      'call $f0',
      'else',
      'local.get 1',
      'local.get 3',
      'v128.store',
      'end',
    ]);
  });

  it('sets each distinct constant once, at the function entry, before the body that uses it', () => {
    const mod = new ModuleBuilder(MEMORY);
    const locals: number[] = [];
    mod.func('constants', [ValType.i32], (f) => {
      const [x] = f.params;
      const v = f.local(ValType.v128);
      f.loop((again) => {
        const two = f.constant(2);
        f.set(v, simd('f32x4.mul', simd('f32x4.add', v, two), f.constant(2)));
        f.set(v, simd('f32x4.add', v, f.constant(-0)));
        f.set(v, simd('f32x4.add', v, f.constant(0)));
        locals.push(two.index, f.constant(2).index, f.constant(-0).index, f.constant(0).index);
        f.brIf(again, x);
      });
    });
    // 2 is one local (2, both times); -0 and 0 differ in their bits, so they are two.
    expect(locals).toEqual([2, 2, 3, 4]);
    const bytes = mod.encode();
    expect(WebAssembly.validate(bytes)).toBe(true);
    const lines = body(moduleText(bytes), 'constants');
    const two = '0x40000000';
    expect(lines.slice(0, 6)).toEqual([
      `v128.const i32x4 ${two} ${two} ${two} ${two}`,
      'local.set 2',
      'v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000',
      'local.set 3',
      'v128.const i32x4 0x00000000 0x00000000 0x00000000 0x00000000',
      'local.set 4',
    ]);
    expect(lines[6]).toBe('loop');
    expect(lines.filter((l) => l.startsWith('v128.const'))).toHaveLength(3);
  });

  it('interleaves the statements of independent copies, and refuses control flow inside them', () => {
    const mod = new ModuleBuilder(MEMORY);
    mod.func('interleaved', [ValType.i32], (f) => {
      const [x] = f.params;
      const [a, b] = f.locals(ValType.i32, 2);
      f.interleave(2, (copy) => {
        const local = copy === 0 ? a : b;
        f.set(local, op('i32.add', x, copy + 1));
        f.set(local, op('i32.mul', local, 3));
        if (copy === 0) f.set(local, op('i32.sub', local, x));
      });
      expect(() => f.interleave(1, () => f.loop(() => {}))).toThrow(/may only set locals and store/);
    });
    const bytes = mod.encode();
    expect(WebAssembly.validate(bytes)).toBe(true);
    expect(body(moduleText(bytes), 'interleaved')).toEqual([
      'local.get 0',
      'i32.const 1',
      'i32.add',
      'local.set 1',
      'local.get 0',
      'i32.const 2',
      'i32.add',
      'local.set 2',
      'local.get 1',
      'i32.const 3',
      'i32.mul',
      'local.set 1',
      'local.get 2',
      'i32.const 3',
      'i32.mul',
      'local.set 2',
      'local.get 1',
      'local.get 0',
      'i32.sub',
      'local.set 1',
    ]);
  });

  it('rejects bytes that are not a module, and opcodes it does not know, naming the byte', () => {
    expect(() => moduleText(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(/not a WebAssembly module/);
    const mod = new ModuleBuilder(MEMORY);
    mod.func('one', [], (f) => f.set(f.local(ValType.i32), 7));
    const bytes = mod.encode();
    // The body ends: i32.const 7, local.set 0, end; make the i32.const an unknown opcode.
    const constAt = bytes.length - 5;
    expect(bytes[constAt]).toBe(0x41);
    bytes[constAt] = 0xff;
    expect(() => moduleText(bytes)).toThrow(/unknown opcode 0xff at byte \d+/);
  });

  it('is written to the file LOOM_WASM_DUMP names when the runtime starts', async () => {
    if (!wasmForTests()) return;
    const dir = mkdtempSync(join(tmpdir(), 'loom-wat-'));
    try {
      const path = join(dir, 'kernels.wat');
      vi.stubEnv('LOOM_WASM_DUMP', path);
      vi.resetModules();
      const runtime = await import('../src/wasm/runtime');
      expect(runtime.wasmRuntime()).toBeDefined();
      const dumped = readFileSync(path, 'utf8');
      expect(dumped).toBe(runtime.kernelModuleText());
      for (const name of KERNEL_NAMES) expect(dumped).toContain(`(export "${name}")`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
