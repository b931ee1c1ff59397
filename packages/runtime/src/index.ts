export { ChatSession, type ChatSessionOptions } from './chat-session';
export { defaultEosTokens, encodePrompt } from './default-stops';
export type { GenerateOptions } from './generate-options';
export type { GenerationEvent, GenerationStats, GenerationTimings } from './generation-event';
export { InferenceSession, type InferenceSessionOptions } from './inference-session';
export { TextGenerator } from './text-generator';
export { type Choice, TokenChooser } from './token-chooser';
