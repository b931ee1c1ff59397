export { MemoryLimitError, type MemoryLimits } from '@loom/kvcache';
export { type ChatEvent, ChatSession, type ChatSessionOptions, type DroppedTurns } from './chat-session';
export { defaultEosTokens, encodePrompt } from './default-stops';
export type { GenerateOptions } from './generate-options';
export type { GenerationEvent, GenerationStats, GenerationTimings } from './generation-event';
export { InferenceSession, type InferenceSessionOptions } from './inference-session';
export { startGeneration } from './run-generation';
export { type TextGenerateOptions, TextGenerator, type TextGeneratorOptions } from './text-generator';
export { type Choice, TokenChooser } from './token-chooser';
