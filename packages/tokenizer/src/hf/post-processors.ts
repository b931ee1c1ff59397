import {
  type JsonObject,
  jsonFail,
  readArray,
  readInteger,
  readObject,
  readString,
} from '../formats/json-read';
import { readType } from './component-type';

/** One item of a TemplateProcessing template. */
export type TemplatePieceJson =
  | { readonly SpecialToken: { readonly id: string; readonly type_id?: number } }
  | { readonly Sequence: { readonly id: 'A' | 'B'; readonly type_id?: number } };

/** The `post_processor` shapes of tokenizer.json that Loom implements (for single sequences). */
export type PostProcessorJson =
  | {
      readonly type: 'TemplateProcessing';
      readonly single: readonly TemplatePieceJson[];
      readonly special_tokens: { readonly [name: string]: { readonly ids: readonly number[] } };
    }
  | { readonly type: 'ByteLevel' }
  | {
      readonly type: 'RobertaProcessing' | 'BertProcessing';
      readonly cls: readonly [string, number];
      readonly sep: readonly [string, number];
    }
  | { readonly type: 'Sequence'; readonly processors: readonly PostProcessorJson[] };

/** Adds the special tokens around the ids of one encoded text (`encode(text, { addSpecialTokens: true })`). */
export type PostProcess = (ids: number[]) => number[];

const TYPES = [
  'TemplateProcessing',
  'ByteLevel',
  'RobertaProcessing',
  'BertProcessing',
  'Sequence',
] as const satisfies readonly PostProcessorJson['type'][];

function compileTemplate(json: JsonObject, source: string, path: string, maxId: number): PostProcess {
  const specials = readObject(json.special_tokens, source, `${path}.special_tokens`);
  /** The template as id lists, with `undefined` where the sequence goes. */
  const parts = readArray(json.single, source, `${path}.single`).map((entry, index) => {
    const where = `${path}.single[${index}]`;
    const item = readObject(entry, source, where);
    if (item.Sequence !== undefined) {
      const id = readObject(item.Sequence, source, `${where}.Sequence`).id;
      if (id !== 'A') jsonFail(source, `${where}.Sequence.id`, '"A" (the single-sequence template)', id);
      return undefined;
    }
    const name = readString(
      readObject(item.SpecialToken, source, `${where}.SpecialToken`).id,
      source,
      `${where}.SpecialToken.id`,
    );
    const special = readObject(specials[name], source, `${path}.special_tokens[${JSON.stringify(name)}]`);
    return readArray(special.ids, source, `${path}.special_tokens[${JSON.stringify(name)}].ids`).map(
      (id, k) =>
        readInteger(id, source, `${path}.special_tokens[${JSON.stringify(name)}].ids[${k}]`, 0, maxId),
    );
  });
  return (ids) => parts.flatMap((part) => part ?? ids);
}

function readIdPair(value: unknown, source: string, path: string, maxId: number): number {
  const pair = readArray(value, source, path);
  if (pair.length !== 2) jsonFail(source, path, 'a [token, id] pair', value);
  readString(pair[0], source, `${path}[0]`);
  return readInteger(pair[1], source, `${path}[1]`, 0, maxId);
}

/** Compiles the post-processor at `path`; ids must be at most `maxId`. */
export function compilePostProcessor(
  value: unknown,
  source: string,
  path: string,
  maxId: number,
): PostProcess {
  const json = readObject(value, source, path);
  const type = readType(json, TYPES, source, path);
  switch (type) {
    case 'TemplateProcessing':
      return compileTemplate(json, source, path, maxId);
    case 'ByteLevel':
      // It only adjusts offsets, which Loom does not report.
      return (ids) => ids;
    case 'RobertaProcessing':
    case 'BertProcessing': {
      const cls = readIdPair(json.cls, source, `${path}.cls`, maxId);
      const sep = readIdPair(json.sep, source, `${path}.sep`, maxId);
      return (ids) => [cls, ...ids, sep];
    }
    case 'Sequence': {
      const steps = readArray(json.processors, source, `${path}.processors`).map((step, index) =>
        compilePostProcessor(step, source, `${path}.processors[${index}]`, maxId),
      );
      return (ids) => steps.reduce((current, step) => step(current), ids);
    }
  }
}
