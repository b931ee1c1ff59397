export type {
  AdamWSpec,
  AttentionSpec,
  Backend,
  DataId,
  FusedKernels,
  MatmulSpec,
  ReduceDims,
  TensorInfo,
} from './backend';
export * as composite from './composite';
export type { CreateOptions, NestedNumbers, RandomOptions } from './creation';
export { arange, full, ones, rand, randn, tensor, toBackend, zeros } from './creation';
export { withComposites } from './dispatch';
export type { DType, HostArray } from './dtype';
export { allocHost, bytesPerElement } from './dtype';
export * from './elementwise';
export type { AttentionOptions, RopeOptions } from './fused';
export {
  adamw,
  attention,
  geluGrad,
  layernorm,
  layernormGrad,
  logSoftmax,
  rmsnorm,
  rmsnormGrad,
  rope,
  softmax,
  softmaxCrossEntropy,
  swiglu,
} from './fused';
export { gather, scatterAdd } from './indexing';
export type { MatmulOptions } from './matmul';
export { matmul } from './matmul';
export {
  assign,
  broadcastTo,
  clone,
  concat,
  permute,
  reshape,
  slice,
  squeeze,
  transpose,
  unsqueeze,
  writeSlice,
} from './movement';
export type { BinaryOp, CompareOp, RandomKind, ReduceOp, UnaryOp } from './ops';
export { binaryOps, compareOps, unaryOps } from './ops';
export { mix32, normalAt, RANDOM_MIX_1, RANDOM_MIX_2, uniformAt } from './random';
export { argmax, max, mean, sum } from './reduce';
export { getBackend, setBackend } from './registry';
export { keep, scope } from './scope';
export type { Shape } from './shape';
export { broadcastShapes, broadcastStrides, normalizeAxis, showShape, sizeOf, stridesOf } from './shape';
export type { Operand } from './tensor';
export { Tensor } from './tensor';
