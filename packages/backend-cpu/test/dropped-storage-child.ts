// Run by storage.test.ts with --expose-gc: storages dropped without free() give their heap blocks back once
// collected, whether they were registered by the end-of-task sweep or by the sweep after YOUNG_LIMIT storages.
// Prints one JSON line: for each way, whether a new storage of the same size reuses the dropped one's block.
import { setTimeout as sleep } from 'node:timers/promises';
import { CpuStorage } from '../src/storage';

const gc = globalThis.gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const LENGTH = 123_457;

/** The address of a storage of LENGTH values that this function drops without free(). */
function dropOne(): number | undefined {
  return new CpuStorage('f32', LENGTH).address;
}

/** Whether, after collections, a new storage of the same size gets the dropped block back. */
async function reused(address: number | undefined): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    gc?.();
    await sleep(10);
    // A few, as other dropped blocks of the size class may come back first.
    const again = Array.from({ length: 3 }, () => new CpuStorage('f32', LENGTH));
    const same = again.some((storage) => storage.address === address);
    for (const storage of again) storage.free();
    if (same) return true;
  }
  return false;
}

// Swept at the end of the task that made it.
const afterTask = dropOne();
await sleep(0);
const byTask = await reused(afterTask);

// Swept within one synchronous run, by the storages made after it.
const inLoop = dropOne();
for (let i = 0; i < 300; i++) new CpuStorage('f32', 16).free();
const byCount = await reused(inLoop);

console.log(JSON.stringify({ byTask, byCount, addresses: [afterTask, inLoop] }));
