export type { Backend, DataId, FusedKernels, MatmulSpec, ReduceDims, TensorInfo } from './backend';
export type { CreateOptions, NestedNumbers, RandomOptions } from './creation';
export { arange, empty, full, ones, rand, randn, tensor, toBackend, zeros } from './creation';
export type { DType, HostArray } from './dtype';
export { allocHost, bytesPerElement } from './dtype';
export * from './elementwise';
export { bf16ToF32, f16ToF32, f32ToBf16Bits, f32ToF16Bits } from './half';
export { checkHalf, type HalfType, HalfWeight, packHalves, unpackHalves } from './half-weight';
export { gather, scatterAdd } from './indexing';
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
export type { AttentionMask, AttentionSpec } from './ops/attention-mask';
export { visibleKeys } from './ops/attention-mask';
export type { Distribution, FusedCase, FusedCases, InputSpec, Tolerance } from './ops/case';
export { ELEMENTWISE, REDUCTION } from './ops/case';
export type { FusedPath } from './ops/dispatch';
export { kernelOf, runFused, runFusedInPlace } from './ops/dispatch';
export type {
  AnyFusedOp,
  BackwardArgs,
  FusedOp,
  Gradient,
  InfosOf,
  InPlaceOp,
  InputNames,
  KernelOf,
  TensorsOf,
} from './ops/op';
export { fusedOp, inPlaceOp } from './ops/op';
export * from './ops/table';
export type { BinaryOp, CompareOp, RandomKind, ReduceOp, UnaryOp } from './primitive-ops';
export { binaryOps, compareOps, unaryOps } from './primitive-ops';
export type { QuantFormat, QuantType } from './quantized-weight';
export {
  dequantize,
  QUANT_BLOCK,
  QuantizedWeight,
  quantFormat,
  quantizedShape,
  quantWordsPerBlock,
  scaleFactors,
} from './quantized-weight';
export { mix32, normalAt, RANDOM_MIX_1, RANDOM_MIX_2, uniformAt } from './random';
export { argmax, max, mean, sum } from './reduce';
export { getBackend, setBackend } from './registry';
export { keep, scope } from './scope';
export type { Shape } from './shape';
export {
  broadcastShapes,
  broadcastStrides,
  normalizeAxis,
  shapesEqual,
  showShape,
  sizeOf,
  stridesOf,
} from './shape';
export { borrowTensor } from './stored-tensor';
export type { MatmulOptions, Operand, Tensor } from './tensor';
