const channel = new MessageChannel();
const waiting: (() => void)[] = [];
channel.port1.onmessage = () => waiting.shift()?.();

/**
 * Resolves in a new task, after the messages already queued for the worker (a Stop) have been handled. On the CPU a
 * token's `await data()` resolves as a microtask, so without this the worker would never read its messages while
 * generating. A message port is used because a nested `setTimeout(0)` waits 4 ms.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(null);
  });
}
