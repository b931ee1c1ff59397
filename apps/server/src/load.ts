import { basename } from 'node:path';
import { type HeldWeights, openModel } from '@loom/generate/open-model';
import type { TransformerLM } from '@loom/nn';
import type { MemoryLimits } from '@loom/runtime';
import type { ChatTemplateName, Tokenizer } from '@loom/tokenizer';
import type { ServeCommand } from './args';

/** A model ready to serve. */
export interface ServedModel {
  /** The name clients pass as `model`: the model file's name. */
  readonly id: string;
  readonly model: TransformerLM;
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplateName;
  /** Memory the key/value caches may take. */
  readonly limits: MemoryLimits;
  /** What the layers read (--weights: the file's blocks by default), and the bytes the weights take. */
  readonly weights: HeldWeights;
}

/** The chat format: the one asked for, else chatml when the tokenizer has its tokens, else plain. */
export function chooseTemplate(tokenizer: Tokenizer, asked: ChatTemplateName | undefined): ChatTemplateName {
  if (asked !== undefined) return asked;
  const chatml = ['<|im_start|>', '<|im_end|>'].every((text) => tokenizer.specialTokenId(text) !== undefined);
  return chatml ? 'chatml' : 'plain';
}

/** Loads the model and tokenizer a command names, on its backend (made the current one). */
export async function loadServedModel(command: ServeCommand, env: NodeJS.ProcessEnv): Promise<ServedModel> {
  const flags = {
    model: command.model,
    tokenizer: command.tokenizer,
    backend: command.backend,
    threads: undefined,
    weights: command.weights,
  };
  const { modelPath, model, tokenizer, limits, weights } = await openModel(flags, env);
  if (tokenizer.vocabSize !== model.config.vocabSize) {
    model.dispose();
    throw new Error(
      `the tokenizer has ${tokenizer.vocabSize} tokens but ${command.model} has a vocabulary of ${model.config.vocabSize}; ` +
        'pass the --tokenizer the model was trained with',
    );
  }
  const template = chooseTemplate(tokenizer, command.chatTemplate);
  return { id: basename(modelPath), model, tokenizer, template, limits, weights };
}
