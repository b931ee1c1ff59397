import { moduleText } from './wat';

/** The environment variable that names a file for the text of the kernel module (Node). */
export const WASM_DUMP_VARIABLE = 'LOOM_WASM_DUMP';

/**
 * Writes the text (WAT) of the kernel module `bytes` to the file named by LOOM_WASM_DUMP, when
 * that is set (Node; a browser has no environment: see kernelModuleText). The file is written
 * beside itself and renamed into place, so a reader never sees half of it.
 */
export function writeKernelDump(bytes: Uint8Array): void {
  if (typeof process === 'undefined' || typeof process.getBuiltinModule !== 'function') return;
  const path = process.env[WASM_DUMP_VARIABLE];
  if (!path) return;
  const fs = process.getBuiltinModule('node:fs');
  const partial = `${path}.${process.pid}.partial`;
  try {
    fs.writeFileSync(partial, moduleText(bytes));
    fs.renameSync(partial, path);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw new Error(
      `${WASM_DUMP_VARIABLE}: cannot write the kernel module's text to ${path} (${String(error)}); set it to a writable file path or unset it`,
    );
  }
}
