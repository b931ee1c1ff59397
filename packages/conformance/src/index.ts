export type { OpCase, OpGroup } from './case';
export type { ConformanceOptions } from './describe';
export { describeConformance } from './describe';
export { allGroups } from './groups';
export type { Distribution, InputSpec } from './inputs';
export { hostValues, makeInputs } from './inputs';
export type { CaseResult } from './run-case';
export { runCase } from './run-case';
export type { Tolerance } from './tolerance';
export {
  ELEMENTWISE,
  EXACT,
  firstMismatch,
  matmulTolerance,
  REDUCTION,
  TRIG,
} from './tolerance';
