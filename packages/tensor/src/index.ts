export type {
  AttentionSpec,
  Backend,
  DataId,
  FusedKernels,
  MatmulSpec,
  ReduceDims,
  TensorInfo,
} from './backend';
export * as composite from './composite';
export { arange, full, ones, rand, randn, tensor, toBackend, zeros } from './creation';
export type { CreateOptions, NestedNumbers, RandomOptions } from './creation';
export { withComposites } from './dispatch';
export { allocHost, bytesPerElement } from './dtype';
export type { DType, HostArray } from './dtype';
export * from './elementwise';
export { attention, layernorm, logSoftmax, rmsnorm, rope, softmax, softmaxCrossEntropy, swiglu } from './fused';
export type { AttentionOptions, RopeOptions } from './fused';
export { gather, scatterAdd } from './indexing';
export { matmul } from './matmul';
export type { MatmulOptions } from './matmul';
export { broadcastTo, clone, concat, permute, reshape, slice, squeeze, transpose, unsqueeze, writeSlice } from './movement';
export { binaryOps, compareOps, fusedOps, unaryOps } from './ops';
export type { BinaryOp, CompareOp, FusedOp, RandomKind, ReduceOp, UnaryOp } from './ops';
export { mix32, normalAt, uniformAt, RANDOM_MIX_1, RANDOM_MIX_2 } from './random';
export { argmax, max, mean, sum } from './reduce';
export { getBackend, setBackend } from './registry';
export { keep, scope } from './scope';
export { broadcastShapes, broadcastStrides, normalizeAxis, showShape, sizeOf, stridesOf } from './shape';
export type { Shape } from './shape';
export { Tensor } from './tensor';
export type { Operand } from './tensor';
