import { describe, expect, it } from 'vitest';
import { op, simd, simdLoad, v128Zero } from '../src/wasm/expr';
import { ModuleBuilder } from '../src/wasm/module-builder';
import { ValType } from '../src/wasm/opcodes';
import { TOUCH_AHEAD_BYTES, touchAhead } from '../src/wasm/touch-ahead';
import { moduleText } from '../src/wasm/wat';

const PAGE = 65536;

/** A module whose `sum(x, bytes, out)` adds the f32 vectors of [x, x + bytes), touching x ahead, and stores the sum at out. */
function summingModule(): Uint8Array<ArrayBuffer> {
  const mod = new ModuleBuilder({ initialPages: 1, maximumPages: 1, shared: false });
  mod.func('sum', [ValType.i32, ValType.i32, ValType.i32], (f) => {
    const [x, bytes, out] = f.params;
    const [end, scratch] = f.locals(ValType.i32, 2);
    const total = f.local(ValType.v128);
    f.set(end, op('i32.add', x, bytes));
    f.set(total, v128Zero);
    f.block((done) => {
      f.brIf(done, op('i32.ge_u', x, end));
      f.loop((again) => {
        touchAhead(f, scratch, x, end, [x]);
        f.set(total, simd('f32x4.add', total, simdLoad('v128.load', x)));
        f.set(x, op('i32.add', x, 16));
        f.brIf(again, op('i32.lt_u', x, end));
      });
    });
    f.storeV128(out, total);
  });
  return mod.encode();
}

describe('touchAhead', () => {
  it('loads and drops a word ahead of each pointer', () => {
    const text = moduleText(summingModule());
    expect(text).toContain(`i32.const ${TOUCH_AHEAD_BYTES}`);
    expect(text).toMatch(/i32\.load[^\n]*\n\s*drop/);
  });

  it('never reads past the array, even when it ends at the end of memory', () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(summingModule()), { env: { memory } });
    const sum = instance.exports.sum as (x: number, bytes: number, out: number) => void;
    const bytes = 3 * TOUCH_AHEAD_BYTES;
    const x = PAGE - bytes;
    new Float32Array(memory.buffer, x, bytes / 4).fill(0.5);
    sum(x, bytes, 0);
    expect(Array.from(new Float32Array(memory.buffer, 0, 4))).toEqual([96, 96, 96, 96]);
  });
});
