export { bytesToUnicode, unicodeToBytes } from './bpe/byte-unicode';
export { type BpeMerging, type ByteLevelBpeSpec, ByteLevelBpeTokenizer } from './bpe/encoder';
export { GPT2_PATTERN, pretokenize } from './bpe/pretokenize';
export { type BpeTrainOptions, trainBpe } from './bpe/train';
export { CharTokenizer, type CharTokenizerOptions } from './char';
export {
  type ChatMessage,
  type ChatPromptOptions,
  type ChatRole,
  type ChatTemplateName,
  encodeChat,
  type PromptPart,
  renderChat,
} from './chat-template';
export {
  detectTokenizerFormat,
  type LoadTokenizerOptions,
  loadTokenizer,
  type TokenizerFormat,
} from './formats/detect';
export { type HfJsonOptions, tokenizerFromHfJson } from './formats/hf-json';
export {
  describeJson,
  isJsonObject,
  type JsonObject,
  jsonFail,
  parseJson,
  readArray,
  readBoolean,
  readChoice,
  readInteger,
  readNumber,
  readObject,
  readOptionalId,
  readOptionalString,
  readPositiveNumber,
  readString,
} from './formats/json-read';
export { tokenizerFromJSON } from './formats/loom-json';
export { type TiktokenOptions, tokenizerFromTiktoken } from './formats/tiktoken';
export type {
  BpeTokenizerJson,
  CharTokenizerJson,
  HfTokenizerJson,
  Llama2cTokenizerJson,
  LoomTokenizerJson,
  UnknownCharPolicy,
} from './formats/tokenizer-json';
export { HfChatTemplate, type HfChatTemplateOptions } from './hf/chat-template';
export { HfTokenizer } from './hf/pipeline';
export { type Llama2cVocab, parseLlama2cTokenizer } from './llama2c/format';
export { Llama2cTokenizer } from './llama2c/tokenizer';
export type { SpecialToken } from './special-token';
export { StreamDecoder } from './stream-decoder';
export type { EncodeOptions, SpecialTokenHandling, Tokenizer, TokenizerKind } from './tokenizer';
