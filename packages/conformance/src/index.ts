export type { OpCase, OpGroup } from './case';
export { describeConformance } from './describe';
export type { ConformanceOptions } from './describe';
export { allGroups } from './groups';
export { hostValues, makeInputs } from './inputs';
export type { Distribution, InputSpec } from './inputs';
export { runCase } from './run-case';
export type { CaseResult } from './run-case';
export {
  ELEMENTWISE,
  EXACT,
  firstMismatch,
  matmulTolerance,
  REDUCTION,
  TRIG,
} from './tolerance';
export type { Tolerance } from './tolerance';
