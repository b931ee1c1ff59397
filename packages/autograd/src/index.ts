export { AutodiffBackend } from './autodiff-backend';
export type { GradcheckOptions, GradcheckResult } from './gradcheck';
export { gradcheck } from './gradcheck';
export type { BackwardFn, TapeNode } from './tape';
export { unbroadcast } from './unbroadcast';
export type { ValueAndGrad } from './value-and-grad';
export { valueAndGrad } from './value-and-grad';
