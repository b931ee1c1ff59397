export { type AtomicWriteOptions, writeFileAtomic } from './atomic-write';
export {
  collectInputStatistics,
  FULL_MOMENTS_MAX_FEATURES,
  type InputStatistics,
} from './calibration/input-statistics';
export {
  CHECKPOINT_FILES,
  type Checkpoint,
  type CheckpointExtra,
  type CheckpointInput,
  loadAnyCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from './checkpoint';
export { type CheckpointConfig, describeConfig, isMambaConfig, type ModelConfig } from './config';
export { detectModelFormat, type ModelFileFormat } from './detect';
export { type DirectoryLock, LOCK_FILE, type LockHolder, type LockOptions, lockDirectory } from './dir-lock';
export { readRegularFile } from './file-source';
export { readLlama2cFile, readSafetensorsFile, writeLlama2cFile, writeSafetensorsFile } from './files';
export {
  isCompactWeight,
  isLinearWeight,
  type LoadOptions,
  type NamedQuantizedTensor,
  repackGgufBlocks,
  type WeightsMode,
} from './gguf/quantized';
export { looksLikeGguf, readGgufTokenizerJson } from './gguf/vocabulary-file';
export {
  GGUF_FALLBACK,
  type GgufTensorType,
  type GgufVocabulary,
  type GgufWeightType,
  type GgufWriteOptions,
  ggufTensorTypes,
  serializeGguf,
} from './gguf/write';
export { halfLinears, halfLinearWeights, type NamedHalfTensor, useHalfWeights } from './half-linears';
export { parseHfConfig, toHfConfig } from './hf/config';
export { fromHfTensors, toHfTensors } from './hf/names';
export { hfToLoomRotary, loomToHfRotary } from './hf/rotary';
export { type Llama2cModel, llama2cFileBytes, parseLlama2c } from './llama2c/read';
export { serializeLlama2c } from './llama2c/write';
export { loadModelFile } from './load';
export {
  type FileRecord,
  isLoomConfigJson,
  isMambaConfigJson,
  LOOM_CHECKPOINT_VERSION,
  type LoomConfigJson,
  parseCheckpointConfigJson,
  parseLoomConfigJson,
} from './loom-config';
export { type LoadedModel, type LoadedModelFormat, parseModel } from './parse-model';
export { type PeftLoraConfig, peftConfigOf, settingsFromPeftConfig } from './peft/adapter-config';
export { loadLoraAdapter, PEFT_FILES, peftTensorsOf, saveLoraAdapter } from './peft/adapter-files';
export { quantizedLinearWeights, quantizeLinears, useQuantizedWeights } from './quantize-model';
export {
  SAFETENSORS_DTYPES,
  type SafetensorsDType,
  type SafetensorsFloatDType,
} from './safetensors/dtype';
export { parseSafetensors, type SafetensorsContents } from './safetensors/read';
export { type SafetensorsWriteOptions, serializeSafetensors } from './safetensors/write';
export type {
  NamedIntTensor,
  NamedTensor,
  StoredTensor,
} from './tensor';
export { type MambaWeights, mambaFromTensors } from './to-mamba';
export { type ModelWeights, tensorsFromTransformer, transformerFromTensors } from './to-model';
export { expectedTensors, type TensorSpec, validateTensors } from './validate';
