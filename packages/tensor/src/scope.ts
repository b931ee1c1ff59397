/** What scopes track: anything that can be disposed once. */
export interface Disposable {
  dispose(): void;
}

const stack: Set<Disposable>[] = [];

/** Records a newly created tensor in the innermost scope, if any. */
export function track(t: Disposable): void {
  stack[stack.length - 1]?.add(t);
}

/** Takes `t` out of every enclosing scope so it survives them; dispose it yourself later. Returns `t`. */
export function keep<T extends Disposable>(t: T): T {
  for (const s of stack) s.delete(t);
  return t;
}

function isAsyncFunction(fn: () => unknown): boolean {
  return fn.constructor.name === 'AsyncFunction' || fn.constructor.name === 'AsyncGeneratorFunction';
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    'then' in value &&
    typeof (value as { then: unknown }).then === 'function'
  );
}

/** Collects every tracked value reachable from `value` through arrays and plain objects. */
function collect(value: unknown, tracked: Set<Disposable>, found: Set<Disposable>): void {
  if (typeof value !== 'object' || value === null) return;
  if (tracked.has(value as Disposable)) {
    found.add(value as Disposable);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collect(v, tracked, found);
  } else if (value instanceof Map) {
    for (const v of value.values()) collect(v, tracked, found);
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) collect(v, tracked, found);
  }
}

/**
 * Runs `fn` synchronously and disposes every tensor created inside it, except those it
 * returns (directly or inside arrays/plain objects) and those passed to `keep`. Returned
 * tensors move to the enclosing scope. An async function is refused: its tensors would be
 * created after the scope ended.
 */
export function scope<T>(fn: () => T): T {
  if (isAsyncFunction(fn)) {
    throw new Error(
      'scope: got an async function; scopes are synchronous — await outside the scope and call scope() on the synchronous part',
    );
  }
  const tracked = new Set<Disposable>();
  stack.push(tracked);
  let result: T;
  try {
    result = fn();
  } catch (err) {
    stack.pop();
    for (const t of tracked) t.dispose();
    throw err;
  }
  stack.pop();
  if (isThenable(result)) {
    for (const t of tracked) t.dispose();
    throw new Error(
      'scope: the function returned a Promise; scopes are synchronous — await outside the scope and call scope() on the synchronous part',
    );
  }
  const survivors = new Set<Disposable>();
  collect(result, tracked, survivors);
  for (const t of tracked) {
    if (survivors.has(t)) track(t);
    else t.dispose();
  }
  return result;
}
