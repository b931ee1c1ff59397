import { type Local, type Operand, op } from './expr';
import type { FunctionBuilder } from './function-builder';

/**
 * How far ahead of its position a streaming loop touches its inputs, in bytes (16 cache lines).
 * An element-wise kernel with an exp does ~40 vector operations a cache line, so the core holds
 * only a few of its loads in flight, and on these machines the hardware prefetchers did not run
 * ahead of it: GELU's gradient over [768, 512] whose x had left the caches (30 inputs in turn)
 * took 1129-1299 us on one thread against 403-412 with x in the caches. Touching one word of the
 * line 1 KiB ahead each pass brought it to 420-475 us (512 B to 16 KiB ahead all did about as
 * well); on two threads 687-719 -> 400-457 us (hot: 211-223).
 */
export const TOUCH_AHEAD_BYTES = 1024;

/**
 * Loads (and drops) one word TOUCH_AHEAD_BYTES past each of `pointers`, which move with
 * `position` through an array ending at `end`; within the last TOUCH_AHEAD_BYTES it touches
 * the pointers themselves, so no load leaves the arrays. `scratch` is an i32 local.
 */
export function touchAhead(
  f: FunctionBuilder,
  scratch: Local,
  position: Operand,
  end: Operand,
  pointers: readonly Local[],
): void {
  const inside = op('i32.lt_u', op('i32.add', position, TOUCH_AHEAD_BYTES), end);
  f.set(scratch, op('select', TOUCH_AHEAD_BYTES, 0, inside));
  for (const p of pointers) f.touch(op('i32.add', p, scratch));
}
