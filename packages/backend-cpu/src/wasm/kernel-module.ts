import { BASELINE_FEATURES, type KernelFeatures, type Local, op } from './expr';
import type { KernelContext, KernelSpec } from './kernel-spec';
import { KERNELS } from './kernels';
import { type ImportedMemory, ModuleBuilder } from './module-builder';
import { ValType } from './opcodes';

/**
 * The kernel module over an imported memory with these limits: every kernel of the registry,
 * exported under its name, with its parameters and a last i32 parameter, the work area.
 */
export function buildKernelModule(
  memory: ImportedMemory,
  features: KernelFeatures = BASELINE_FEATURES,
): Uint8Array<ArrayBuffer> {
  const mod = new ModuleBuilder(memory);
  const context: KernelContext = { mod, features };
  const specs: readonly KernelSpec[] = KERNELS;
  for (const spec of specs) emitKernel(spec, context);
  return mod.encode();
}

/** Adds `spec` as an exported function; f32 parameters arrive as i32 bits and are read into f32 locals. */
function emitKernel(spec: KernelSpec, context: KernelContext): void {
  const types = [...spec.params.map(() => ValType.i32), ValType.i32];
  context.mod.func(spec.name, types, (f) => {
    const named: Record<string, Local> = {};
    spec.params.forEach((param, i) => {
      if (param.kind === 'i32') {
        named[param.name] = f.params[i];
        return;
      }
      const value = f.local(ValType.f32);
      f.set(value, op('f32.reinterpret_i32', f.params[i]));
      named[param.name] = value;
    });
    spec.emit(f, { ...named, work: f.params[spec.params.length] }, context);
  });
}
