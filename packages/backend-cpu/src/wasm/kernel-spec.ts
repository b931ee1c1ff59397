import type { KernelFeatures, Local } from './expr';
import type { FunctionBuilder } from './function-builder';
import type { ModuleBuilder } from './module-builder';

/**
 * What a kernel parameter holds: an i32 (a byte address, a size, a stride) or an f32 value. An
 * f32 crosses into WebAssembly as its bits in an i32 (so the i32 slots of the thread pool's job
 * block carry it to the workers) and the kernel body reads it as an f32 local.
 */
export type ParamKind = 'i32' | 'f32';

/** One parameter of a kernel: its name (the body's handle on it) and kind. */
export interface KernelParam {
  readonly name: string;
  readonly kind: ParamKind;
}

/** Parameters named `N`, in order, all of kind `K`. */
export type ParamsOf<K extends ParamKind, N extends readonly string[]> = {
  readonly [I in keyof N]: { readonly name: N[I]; readonly kind: K };
};

function paramsOf<K extends ParamKind, const N extends readonly string[]>(kind: K, names: N): ParamsOf<K, N> {
  // map() keeps order and length but types its result as an array, not the tuple it is.
  return names.map((name) => ({ name, kind })) as unknown as ParamsOf<K, N>;
}

/** i32 parameters named `names`, in order. */
export function i32<const N extends readonly string[]>(...names: N): ParamsOf<'i32', N> {
  return paramsOf('i32', names);
}

/** f32 parameters named `names`, in order. */
export function f32<const N extends readonly string[]>(...names: N): ParamsOf<'f32', N> {
  return paramsOf('f32', names);
}

/**
 * The locals a kernel body gets: each parameter by name (f32 ones as f32 locals) and `work`,
 * the byte address of the calling thread's work area (every kernel takes it as its last
 * argument; only `gemm` uses it).
 */
export type ParamLocals<P extends readonly KernelParam[]> = {
  readonly [Q in P[number] as Q['name']]: Local;
} & { readonly work: Local };

/** What a kernel body may use besides its parameters: the module (for helper functions) and the instruction sets. */
export interface KernelContext {
  readonly mod: ModuleBuilder;
  readonly features: KernelFeatures;
}

/**
 * A WebAssembly kernel, declared once: its export name, its parameters, and the code of its
 * body. The registry (`kernels.ts`) derives the kernel-name union, the module's exports and the
 * typed call signature of each kernel from these entries.
 */
export interface KernelSpec<
  Name extends string = string,
  P extends readonly KernelParam[] = readonly KernelParam[],
> {
  readonly name: Name;
  readonly params: P;
  /** Writes the body into `f`. */
  emit(f: FunctionBuilder, params: ParamLocals<P>, context: KernelContext): void;
}

/** Declares a kernel (the identity, for the inference of its name and parameter tuple). */
export function kernel<const Name extends string, const P extends readonly KernelParam[]>(
  spec: KernelSpec<Name, P>,
): KernelSpec<Name, P> {
  return spec;
}

/** The argument tuple of parameters `P` (without the trailing work area): one number each. */
export type ArgsOf<P extends readonly KernelParam[]> = { -readonly [I in keyof P]: number };
